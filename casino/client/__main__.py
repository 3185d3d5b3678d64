"""`python -m casino.client`: the playing client (see casino.client.cli)."""

from casino.client.cli import main

raise SystemExit(main())
