// /play/history/: your rounds, newest first, a page at a time (the API's keyset cursor).
import { $, OUTCOMES, api, showError, toMicro, totalText, usdc } from "./common.js";

const me = document.body.dataset.playerId;
const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
const NAMES = { classic: "Classic", atlantic_city: "Atlantic City", duel: "Duel", duel_classic: "Duel classic" };
const BOXES = ["centre", "right", "left"];

const cardText = (c) => (c.hidden ? "🂠" : `${c.card[0] === "T" ? "10" : c.card[0]}${SUITS[c.card[1]] ?? c.card[1]}`);

function handLine(label, cards, t, outcome) {
  const li = document.createElement("li");
  li.className = "hand-line";
  li.textContent = `${label}: ${cards.map(cardText).join(" ")}${t !== "" ? ` (${t})` : ""}${outcome ? ` — ${outcome}` : ""}`;
  return li;
}

function roundItem(r) {
  const view = r.view;
  const li = document.createElement("li");
  li.className = "round";
  li.dataset.round = r.round_id;
  li.dataset.status = r.status;
  const head = document.createElement("p");
  const when = new Date(r.opened_at).toLocaleString();
  head.textContent = `${NAMES[r.ruleset] ?? r.ruleset} · table ${r.table_id} · ${when} · `;
  const outcome = document.createElement("strong");
  outcome.className = "outcome";
  outcome.textContent = r.outcome;
  head.append(outcome);
  if (r.net !== null) {
    const net = toMicro(r.net);
    head.append(` · net ${net > 0 ? "+" : ""}${usdc(net)}`);
  }
  const hands = document.createElement("ul");
  const results = view.settlement?.hands ?? [];
  const many = view.boxes.filter((b) => b.player_id === me).length > 1;
  for (const box of view.boxes) {
    const mine = box.player_id === me;
    box.hands.forEach((hand, i) => {
      const result = results.find((x) => x.player_id === box.player_id && x.box === box.box && x.hand === i);
      const owner = mine ? "You" : `Player ${box.player_id}`;
      const where = many || box.hands.length > 1 ? ` box ${box.box + 1}${many && r.ruleset === "atlantic_city" ? ` (${BOXES[box.box]})` : ""} hand ${i + 1}` : "";
      const said = result && (OUTCOMES[result.outcome] ?? result.outcome);
      hands.append(handLine(`${owner}${where}`, hand.cards, totalText(hand.total, hand.soft, hand.cards.length, hand.split), said));
    });
  }
  for (const ins of view.settlement?.insurance ?? []) {
    if (ins.player_id !== me || !toMicro(ins.stake)) continue; // settled apart from the hand
    const net = toMicro(ins.gross_return) - toMicro(ins.stake);
    const li = document.createElement("li");
    li.className = "hand-line";
    const where = many ? ` box ${ins.box + 1}` : "";
    li.textContent = `Insurance${where} (${usdc(toMicro(ins.stake))}): ${net > 0 ? `won +${usdc(net)}` : `lost ${usdc(net)}`}`;
    hands.append(li);
  }
  if (view.dealer) {
    const dealer = handLine("Dealer", view.dealer.cards, totalText(view.dealer.total, false, view.dealer.cards.length));
    dealer.classList.add("dealer-line");
    hands.append(dealer);
  }
  li.append(head, hands);
  if (r.status !== "open") {
    const link = document.createElement("a");
    link.href = `/fairness/verify/?round=${encodeURIComponent(r.round_id)}`;
    link.textContent = "Verify";
    li.append(link);
  }
  return li;
}

let next = "/api/me/rounds/?limit=10";

async function more() {
  if (!next) return;
  showError(null);
  try {
    const page = await api(next);
    $("rounds").append(...page.results.map(roundItem));
    next = page.next;
    $("more").hidden = !next;
    $("empty").hidden = $("rounds").children.length > 0;
  } catch (err) {
    showError(err);
  }
}

$("more").addEventListener("click", more);
more();
