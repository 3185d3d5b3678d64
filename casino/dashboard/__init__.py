"""The staff dashboard: round review, review queue, ledger views, daily report, public stats.

Built on Django admin. Staff actions (flag, review, void) are events in a per-round review
stream (`review-<round id>`), never in the round's own stream, whose replay knows only game
events. Its read models (`RoundReview`, stats contributions) are projections of events.
"""
