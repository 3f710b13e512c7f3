"""Settings every test process needs, whoever started the suite.

A suite started in the background by a non-interactive shell (``pytest … &``
in a script, a CI step that backgrounds it) inherits SIGINT ignored, and so
does every ``stepkit`` a test starts; stepkit leaves an ignored SIGINT
ignored (as under ``nohup``), so a Ctrl-C test would wait for an interrupt
that never comes.  A handler (unlike an ignore) is reset by ``exec``: the
commands the tests start get SIGINT's default again.
"""

import signal

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
