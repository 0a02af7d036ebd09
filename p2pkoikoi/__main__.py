from p2pkoikoi.cli import main

raise SystemExit(main())
