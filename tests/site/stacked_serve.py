"""`manage.py serve` for the player site's browser tests, with a stackable shoe.

`python tests/site/stacked_serve.py --port P` serves exactly like `manage.py serve`. A test
stacks the next round's cards by writing them (JSON list, dealing order) to
`$SITE_STACK_DIR/stack.json`: the next round opened deals them (then 2C forever) and the file
is consumed; every other round deals from the fair shoe. It also creates the test players
`u1`..`u12` (password `pw-site`, 1,000 USDC each) before serving.

Nothing here is imported by the product; the hooks wrap module attributes at startup.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PLAYERS = tuple(f"u{i}" for i in range(1, 13))
PASSWORD = "pw-site"


def install() -> None:
    """Route round opens through the stack file when it exists."""
    # Django is set up by now (__main__ below); the product modules load after it.
    from casino.engine.shoe import StackedShoe
    from casino.rounds import seeds

    fair_open, fair_for = seeds.shoe_for_open, seeds.shoe_for
    stacked: dict[str, Any] = {}
    stack_file = Path(os.environ["SITE_STACK_DIR"]) / "stack.json"

    def shoe_for_open(command: Any) -> Any:
        try:
            cards = json.loads(stack_file.read_text())
            stack_file.unlink()
        except FileNotFoundError:
            return fair_open(command)
        stacked[command.round_id] = StackedShoe([*cards, *["2C"] * 60])
        return stacked[command.round_id]

    def shoe_for(state: Any) -> Any:
        shoe = stacked.get(state.opened.round_id)
        if shoe is None:
            return fair_for(state)
        return None if state.finished else shoe

    seeds.shoe_for_open = shoe_for_open
    seeds.shoe_for = shoe_for


def players() -> None:
    """The test players, funded once (the same deposit key every start)."""
    # Django is set up by now (__main__ below); the models load after it.
    from django.contrib.auth import get_user_model

    from ledger.services import wallet_deposit

    User = get_user_model()
    for name in PLAYERS:
        user, created = User.objects.get_or_create(username=name)
        if created:
            user.set_password(PASSWORD)
            user.save()
        wallet_deposit(user=user, amount_micro=1_000_000_000, idempotency_key=f"site:{name}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino.settings")
    # Django is configured here, in the serving process, not at import time.
    import django
    from django.conf import settings
    from django.core.management import call_command

    django.setup()
    # Fast logins for the test players only: PBKDF2 costs about a second a login here.
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.MD5PasswordHasher",
        *settings.PASSWORD_HASHERS,
    ]
    install()
    players()
    call_command("serve", *sys.argv[1:])
