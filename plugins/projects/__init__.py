"""Project-type plugins: each returns gate commands as data, never runs them.

Each module declares one :class:`~stepkit.plugins.projects._base.ProjectType`
— how it reads a project (None: not of its type), its type name, and the
command of each gate it has an opinion on (``format``, ``lint``, ``build``,
``tests``), by name — and binds the hookimpls the declaration makes:
``stepkit_detect_project`` and the command hook of each gate declared, which
answers None for a project without a command for it.  Shared file readers
live in ``_shared``.

Priority — per gate, the first plugin with an answer wins:

1. ``stepkit.plugins.overrides``: ``FORMAT_CMD``/``LINT_CMD``/``BUILD_CMD``/
   ``TEST_CMD``, then ``[tool.stepkit.commands]`` (``tryfirst``; ``""`` means
   "no command", and stops the search).
2. The project's ``stepconf.py``, then ``[tool.stepkit] plugins``, then
   entry-point plugins (registered after the built-ins, so asked first).
3. ``ci``: the commands the project's CI runs (``ci_files`` reads them),
   for lint, build and tests, with their file and line
   (``stepkit_gate_source``).
4. ``taskrunners``: Taskfile, justfile, Makefile — targets that really exist.
5. Language manifests, in this order: ``rust`` (Cargo.toml), ``go``
   (go.mod), ``deno`` (deno.json), ``node`` (package.json scripts), ``python``
   (pyproject.toml, setup.py …), ``jvm`` (pom.xml, then Gradle), ``dotnet``
   (.sln/.csproj), ``cmake`` (CMakeLists.txt), ``ruby`` (Gemfile), ``elixir``
   (mix.exs), ``php`` (composer.json), ``swift`` (Package.swift), ``zig``
   (build.zig).

pluggy calls the last registered plugin first, so
:data:`stepkit.pluginmanager.DEFAULT_PLUGINS` lists these modules in the
reverse of this order.  The priority is per gate: a Makefile with a ``test``
target but no ``lint`` target in a ruff project gives ``make test`` and
``ruff check``.  ``stepkit detect`` shows, for each gate, the command and the
plugin that chose it, and the notes (``stepkit_detect_notes``) of commands a
plugin passed over.

A format command that takes files names the step's changed files with the
placeholder ``{files}`` / ``{files:.ext,…}`` (``_shared.changed_files``),
which the gate runner fills in; docs/detection.md states every rule.  A
build system no module here supports is named by ``unsupported``.
"""
