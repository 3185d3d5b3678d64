"""API routes of this app, mounted under /api/wallet/ by casino/api_urls.py."""

from django.urls import URLPattern, URLResolver, path

from ledger import apis

urlpatterns: list[URLPattern | URLResolver] = [
    path("balance/", apis.WalletBalanceApi.as_view(), name="wallet-balance"),
    path("entries/", apis.WalletEntryListApi.as_view(), name="wallet-entries"),
    path("withdrawals/", apis.WithdrawalRequestApi.as_view(), name="wallet-withdrawal-request"),
    path("faucet/", apis.FaucetApi.as_view(), name="wallet-faucet"),
    path("staff/deposits/", apis.StaffDepositApi.as_view(), name="wallet-staff-deposit"),
    path(
        "staff/withdrawals/", apis.StaffWithdrawalListApi.as_view(), name="wallet-staff-withdrawals"
    ),
    path(
        "staff/withdrawals/<int:withdrawal_id>/complete/",
        apis.StaffWithdrawalCompleteApi.as_view(),
        name="wallet-staff-withdrawal-complete",
    ),
    path(
        "staff/withdrawals/<int:withdrawal_id>/cancel/",
        apis.StaffWithdrawalCancelApi.as_view(),
        name="wallet-staff-withdrawal-cancel",
    ),
    path(
        "staff/receivables/", apis.StaffReceivableListApi.as_view(), name="wallet-staff-receivables"
    ),
]
