// /play/: sign in, the wallet (balance, faucet, withdrawal) and the lobby of tables.
import { $, api, refreshBalance, showError, signedIn, toMicro, usdc } from "./common.js";

const NAMES = {
  classic: "Classic", atlantic_city: "Atlantic City", duel: "Duel", duel_classic: "Duel classic",
};

function signIn() {
  $("sign-in").addEventListener("submit", async (event) => {
    event.preventDefault();
    showError(null);
    try {
      await api("/api/auth/login/", {
        method: "POST",
        body: { username: $("username").value, password: $("password").value },
      });
      const next = new URLSearchParams(location.search).get("next");
      location.assign(next && next.startsWith("/play/") ? next : "/play/");
    } catch (err) {
      showError(err);
    }
  });
}

async function wallet() {
  const data = await refreshBalance();
  $("wallet-available").textContent = usdc(toMicro(data.available));
  const pending = toMicro(data.pending_withdrawal);
  $("wallet-pending").textContent = pending ? `(${usdc(pending)} withdrawal pending)` : "";
}

function limits(t) {
  if (t.ruleset === "duel") return `stake ${usdc(toMicro(t.stake))}`;
  return `${usdc(toMicro(t.min_bet))} – ${usdc(toMicro(t.max_bet))}`;
}

function tableRow(t) {
  const li = document.createElement("li");
  li.className = "table-entry";
  li.dataset.tableId = t.id;
  const link = document.createElement("a");
  link.href = `/play/${t.id}/`;
  link.textContent = t.personal ? `${t.name} (personal table)` : t.name;
  const facts = document.createElement("span");
  const bits = [limits(t), `${t.seated.length}/${t.seats} seats taken`];
  if (t.open_round) bits.push("round in progress");
  facts.textContent = ` — ${bits.join(" · ")}`;
  li.append(link, facts);
  return li;
}

async function lobby() {
  const tables = await api("/api/tables/");
  const root = $("tables");
  root.replaceChildren();
  for (const [ruleset, name] of Object.entries(NAMES)) {
    const mine = tables.filter((t) => t.ruleset === ruleset);
    const section = document.createElement("section");
    section.dataset.ruleset = ruleset;
    const h = document.createElement("h2");
    h.textContent = name;
    const rules = document.createElement("a");
    rules.href = `/play/rules/${ruleset}/`;
    rules.textContent = "Rules";
    h.append(" ", rules);
    const list = document.createElement("ul");
    list.append(...mine.map(tableRow));
    if (!mine.length) list.append(Object.assign(document.createElement("li"), { textContent: "No open table." }));
    section.append(h, list);
    root.append(section);
  }
}

function walletForms() {
  $("faucet")?.addEventListener("submit", async (event) => {
    event.preventDefault();
    showError(null);
    $("wallet-note").textContent = ""; // an earlier success is not this request's answer
    try {
      const added = $("faucet-amount").value.trim();
      await api("/api/wallet/faucet/", { method: "POST", body: { amount: added } });
      $("wallet-note").textContent = `Added ${usdc(toMicro(added))}.`;
      await wallet();
    } catch (err) {
      showError(err);
    }
  });
  $("withdraw").addEventListener("submit", async (event) => {
    event.preventDefault();
    showError(null);
    $("wallet-note").textContent = "";
    try {
      const w = await api("/api/wallet/withdrawals/", {
        method: "POST",
        body: {
          amount: $("withdraw-amount").value.trim(),
          network: $("withdraw-network").value,
          address: $("withdraw-address").value.trim(),
        },
      });
      $("wallet-note").textContent = `Withdrawal of ${usdc(toMicro(w.amount ?? "0"))} requested.`;
      await wallet();
    } catch (err) {
      showError(err);
    }
  });
  for (const button of document.querySelectorAll("button.personal")) {
    button.addEventListener("click", async () => {
      showError(null);
      try {
        const t = await api("/api/tables/personal/", { method: "POST", body: { ruleset: button.dataset.ruleset } });
        location.assign(`/play/${t.id}/`);
      } catch (err) {
        showError(err);
      }
    });
  }
}

if (signedIn()) {
  walletForms();
  Promise.all([wallet(), lobby()]).catch(showError);
} else {
  signIn();
}
