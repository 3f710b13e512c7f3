"""Built-in stepkit plugins, shipped as ``stepkit.plugins``.

Each module is registered by :data:`stepkit.pluginmanager.DEFAULT_PLUGINS`;
nothing imports them as a side effect.
"""
