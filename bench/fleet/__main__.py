from bench.fleet.cli import main

raise SystemExit(main())
