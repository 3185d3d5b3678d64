// /play/events/ and /play/leaderboard/: the public stats the server already keeps.
import { $, api, playerId, showError, toMicro, usdc } from "./common.js";

const NAMES = { classic: "Classic", atlantic_city: "Atlantic City", duel: "Duel", duel_classic: "Duel classic" };

function row(cells) {
  const tr = document.createElement("tr");
  for (const c of cells) {
    const td = document.createElement("td");
    if (c instanceof Node) td.append(c);
    else td.textContent = String(c);
    tr.append(td);
  }
  return tr;
}

async function events() {
  const [wins, tables] = await Promise.all([api("/api/stats/biggest-wins/"), api("/api/stats/tables/")]);
  $("wins").querySelector("tbody").replaceChildren(...wins.map((w) => {
    const link = Object.assign(document.createElement("a"), {
      href: `/fairness/verify/?round=${encodeURIComponent(w.round_id)}`, textContent: "Verify",
    });
    return row([w.player, NAMES[w.ruleset] ?? w.ruleset, usdc(toMicro(w.net)), new Date(w.finished_at).toLocaleString(), link]);
  }));
  $("table-stats").querySelector("tbody").replaceChildren(...tables.map((t) => row([
    t.table_id, NAMES[t.ruleset] ?? t.ruleset, t.rounds, usdc(toMicro(t.handle)), usdc(toMicro(t.players_net)), t.open_rounds,
  ])));
}

async function leaders() {
  const rows = await api(`/api/stats/leaderboard/?period=${$("period").value}`);
  $("leaders").querySelector("tbody").replaceChildren(...rows.map((r, i) => row([
    i + 1, r.player, r.rounds, usdc(toMicro(r.handle)), usdc(toMicro(r.net)),
  ])));
}

/** The signed-in player's public name and opt-out (PUT /api/stats/profile/), then the board
 * again: a refusal (a name taken, reserved or not allowed) is shown as the server's message. */
async function publicName() {
  const form = $("public-name");
  if (!form) return;
  const profile = await api("/api/stats/profile/");
  $("display-name").value = profile.display_name;
  $("opt-out").checked = profile.opt_out;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    showError(null);
    $("public-name-status").textContent = "";
    try {
      const saved = await api("/api/stats/profile/", {
        method: "PUT", body: { display_name: $("display-name").value, opt_out: $("opt-out").checked },
      });
      $("display-name").value = saved.display_name;
      $("public-name-status").textContent = saved.opt_out
        ? "Saved: you are off the public stats."
        : `Saved: you appear as ${saved.display_name || `player-${playerId()}`}.`;
      await leaders();
    } catch (err) {
      showError(err);
    }
  });
}

const page = document.body.dataset.page;
if (page === "events") events().catch(showError);
if (page === "leaderboard") {
  $("period").addEventListener("change", () => leaders().catch(showError));
  leaders().catch(showError);
  publicName().catch(showError);
}
