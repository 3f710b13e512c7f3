from stepkit.cli import main

raise SystemExit(main())
