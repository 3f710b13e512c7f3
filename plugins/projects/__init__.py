"""Project-type plugins: each returns gate commands as data, never runs them.

Each module defines ``commands(project_dir)`` — its gate commands as a dict,
None when the project is not of its type — and binds, with
``_shared.gate_hooks``, ``stepkit_detect_project`` (its type name when it
recognises the project) and the command hooks for the gates it has an
opinion on (``stepkit_format_command``, ``stepkit_lint_command``,
``stepkit_build_command``, ``stepkit_test_command``), which answer None for a
gate without a command.  Shared file readers live in ``_shared`` too.

Priority — per gate, the first plugin with an answer wins:

1. ``stepkit.plugins.overrides``: ``FORMAT_CMD``/``LINT_CMD``/``BUILD_CMD``/
   ``TEST_CMD``, then ``[tool.stepkit.commands]`` (``tryfirst``; ``""`` means
   "no command", and stops the search).
2. The project's ``stepconf.py``, then ``[tool.stepkit] plugins``, then
   entry-point plugins (registered after the built-ins, so asked first).
3. ``taskrunners``: Taskfile, justfile, Makefile — targets that really exist.
4. Language manifests, in this order: ``rust`` (Cargo.toml), ``go``
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
plugin that chose it.
"""
