// /play/<id>/: one table, every rule set. The server's round view decides what is shown and
// which buttons are enabled (view.actions); the page only renders it and sends commands, over
// the table WebSocket when it is open (REST otherwise), and resumes after a dropped socket.
import {
  $, ApiError, OUTCOMES, amount, api, newKey, playerId, refreshBalance, showError, toMicro, totalText, usdc,
} from "./common.js";

const table = JSON.parse($("table-data").textContent);
const RULESET = table.ruleset;
const DUEL = RULESET === "duel";
const BANKED = !DUEL;
const BOX_COUNT = RULESET === "atlantic_city" ? 3 : 1;
const BOX_NAMES = RULESET === "atlantic_city" ? ["Centre", "Right", "Left"] : ["Box"];
const FELTS = ["green", "blue", "red", "black", "purple"];
const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
const SUIT_WORDS = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };
const RANK_WORDS = { A: "ace", K: "king", Q: "queen", J: "jack", T: "10" };
const me = playerId();

const s = {
  round: null, // {round_id, version, view}
  bets: Array(BOX_COUNT).fill(0), // micro-USDC per box
  box: 0, // the box the chips go to
  lastBet: [],
  changing: false,
  busy: false,
  prefs: null,
  prompt: null, // {kind, ...}
  table,
};
const metrics = { latencies: [], messages: 0, frames: [] };
window.__site = { state: s, metrics };

// ---- money and chips -------------------------------------------------------------------

const minBet = toMicro(table.min_bet);
const maxBet = toMicro(table.max_bet);
const unit = toMicro(table.chip_unit) || 1;
const CHIPS = [0.1, 0.5, 1, 5, 25, 100, 500]
  .map((v) => Math.round(v * 1_000_000))
  .filter((m) => m <= maxBet && m % unit === 0 && m * 100 >= minBet);

function chipName(micro) {
  return `Chip ${usdc(micro).replace(/\.00 /, " ").replace(/(\.\d)0 /, "$1 ")}`;
}

function betOk() {
  const placed = s.bets.filter((b) => b > 0);
  return placed.length > 0 && placed.every((b) => b >= minBet && b <= maxBet);
}

// ---- cards -----------------------------------------------------------------------------

function cardEl(c) {
  const span = document.createElement("span");
  span.className = "card";
  if (c.hidden) {
    span.dataset.card = "hidden";
    span.classList.add("back");
    span.textContent = "🂠";
    span.setAttribute("aria-label", "face-down card");
    return span;
  }
  const rank = c.card[0];
  const suit = c.card[1];
  span.dataset.card = c.card;
  if (suit === "H" || suit === "D") span.classList.add("red");
  span.textContent = `${rank === "T" ? "10" : rank}${SUITS[suit] ?? suit}`;
  span.setAttribute("aria-label", `${RANK_WORDS[rank] ?? rank} of ${SUIT_WORDS[suit] ?? suit}`);
  return span;
}

// ---- rendering -------------------------------------------------------------------------

const finished = (view) => Boolean(view && (view.settlement || view.voided));
const actions = () => new Set(s.round?.view?.actions ?? []);
const who = (pid) => (pid === me ? "You" : `Player ${pid}`);
const mySeat = () => s.table.seated.find((seat) => String(seat.user_id) === me);
const tableFull = () => s.table.seated.length >= s.table.seats;

function myHandInTurn(view) {
  const turn = view?.turn;
  if (!turn || turn.player_id !== me) return null;
  const box = view.boxes.find((b) => b.box === turn.box && b.player_id === turn.player_id);
  return box?.hands[turn.hand] ?? null;
}

function renderDealer(view) {
  const dealer = $("dealer");
  dealer.hidden = !view?.dealer;
  if (!view?.dealer) return;
  const hand = $("dealer-hand");
  const total = document.createElement("span");
  total.className = "total";
  total.textContent = totalText(view.dealer.total, false, view.dealer.cards.length);
  hand.replaceChildren(...view.dealer.cards.map(cardEl), total);
}

function renderBoxes(view) {
  const root = $("boxes");
  if (!view) {
    root.replaceChildren();
    return;
  }
  const results = view.settlement?.hands ?? [];
  const turn = view.turn;
  root.replaceChildren(...view.boxes.map((box) => {
    const div = document.createElement("div");
    div.className = "box";
    div.dataset.player = box.player_id;
    div.dataset.box = box.box;
    if (box.player_id === me) div.classList.add("mine");
    const title = document.createElement("h3");
    const where = BOX_COUNT > 1 ? ` — ${BOX_NAMES[box.box]} box` : "";
    title.textContent = `${who(box.player_id)}${where}: bet ${usdc(toMicro(box.bet))}`;
    if (toMicro(box.insurance) > 0) title.textContent += `, insurance ${usdc(toMicro(box.insurance))}`;
    div.append(title);
    box.hands.forEach((hand, i) => {
      const h = document.createElement("div");
      h.className = "hand";
      h.dataset.hand = i;
      if (turn && turn.player_id === box.player_id && turn.box === box.box && turn.hand === i && !finished(view)) {
        h.classList.add("in-turn");
        h.setAttribute("aria-current", "true");
      }
      const total = document.createElement("span");
      total.className = "total";
      total.textContent = totalText(hand.total, hand.soft, hand.cards.length, hand.split);
      const result = results.find((r) => r.player_id === box.player_id && r.box === box.box && r.hand === i);
      const out = document.createElement("span");
      out.className = "outcome";
      if (result) {
        out.dataset.outcome = result.outcome;
        const net = toMicro(result.gross_return) - toMicro(result.stake);
        out.textContent = `${OUTCOMES[result.outcome] ?? result.outcome} ${net > 0 ? "+" : ""}${usdc(net)}`;
      }
      h.append(...hand.cards.map(cardEl), total, out);
      div.append(h);
    });
    return div;
  }));
}

function renderResult(view) {
  const root = $("result");
  if (!view || !finished(view)) {
    root.replaceChildren();
    return;
  }
  const parts = [];
  if (view.voided) {
    parts.push(`Round voided: ${view.voided.reason}. Every stake is refunded.`);
  } else if (DUEL) {
    const hands = view.settlement.hands;
    const pot = hands.reduce((sum, h) => sum + toMicro(h.stake), 0);
    const fee = toMicro(view.settlement.fee);
    const winners = hands.filter((h) => h.outcome === "win" || h.outcome === "split"); // split: a shared pot
    const names = winners.map((h) => who(h.player_id)).join(", ") || "nobody";
    const share = winners.length ? toMicro(winners[0].gross_return) : 0;
    parts.push(`Winners: ${names}. Pot ${usdc(pot)}, fee ${usdc(fee)}, ` +
      `${winners.length > 1 ? "split: each gets" : "paid"} ${usdc(share)}.`);
  } else {
    const mine = view.settlement.hands.filter((h) => h.player_id === me);
    const ins = (view.settlement.insurance ?? []).filter((h) => h.player_id === me);
    const net = [...mine, ...ins].reduce((sum, h) => sum + toMicro(h.gross_return) - toMicro(h.stake), 0);
    if (mine.length) parts.push(`Round over: you ${net > 0 ? "won" : net < 0 ? "lost" : "broke even,"} ${usdc(Math.abs(net))}.`);
    else parts.push("Round over.");
  }
  const p = document.createElement("p");
  p.id = "result-text";
  p.textContent = parts.join(" ");
  const link = document.createElement("a");
  link.href = `/fairness/verify/?round=${encodeURIComponent(view.round_id)}`;
  link.textContent = "Verify";
  link.id = "verify-link";
  root.replaceChildren(p, link);
}

// A shared table's deal waits for a public beacon round nobody knew when the seats locked.
function beaconText(beacon) {
  const source = beacon.name === "drand-quicknet" ? "drand quicknet" : "the operator's own beacon";
  return `Bets locked. The cards wait for public randomness: ${source} round ${beacon.round}.`;
}

function statusText(view) {
  if (!view && !s.table.personal && !mySeat()) {
    if (tableFull()) return "Every seat is taken: you are watching.";
    return DUEL ? "Sit and press Ready to start a duel." : "Sit to place a bet.";
  }
  if (!view && DUEL) return mySeat()?.ready ? "Ready: the duel starts when every seat is." : "Press Ready to start a duel.";
  if (!view) return "Place your bet.";
  if (finished(view)) return view.voided ? "Round voided." : "Round over.";
  const a = actions();
  if (a.has("insurance")) return "Insurance?";
  if (a.has("even_money")) return "Even money?";
  if (a.has("deal")) return "Place your bet: the betting window is open.";
  if (view.phase === "insurance") return "Waiting for the insurance answers.";
  if (view.phase === "betting") return "Waiting for the bets.";
  if (view.phase === "beacon") return beaconText(view.beacon);
  if (view.phase === "dueling") {
    if (a.size) return "Hit or stand before the timer ends.";
    const hand = myBoxes(view)[0]?.hands[0];
    if (!hand) return "Waiting for the reveal."; // watching, not in this duel
    return hand.total > 21 ? `Bust (${hand.total}): waiting for the reveal.` : "You stood: waiting for the reveal.";
  }
  if (view.turn?.player_id === me) return "Your turn.";
  if (view.turn) return `${who(view.turn.player_id)}'s turn.`;
  return "The dealer plays.";
}

function myBoxes(view) {
  return (view?.boxes ?? []).filter((b) => b.player_id === me);
}

/** What the viewer has staked in a view (bets, doubles, splits, insurance), in micro-USDC. */
function myStake(view) {
  return myBoxes(view).reduce((sum, b) => {
    const hands = b.hands.reduce((m, h) => m + toMicro(h.stake ?? "0"), 0);
    return sum + Math.max(toMicro(b.bet), hands) + toMicro(b.insurance);
  }, 0);
}

function renderPrompt() {
  const root = $("prompt");
  const view = s.round?.view;
  const a = actions();
  let prompt = s.prompt;
  if (!prompt && view && !finished(view)) {
    const offered = myBoxes(view).find((b) => b.insurance_status === "offered" || b.insurance_status === "even_money_offered");
    if (a.has("even_money") && offered?.insurance_status === "even_money_offered") prompt = { kind: "even_money", box: offered.box };
    else if (a.has("insurance") && offered) prompt = { kind: "insurance", box: offered.box };
  }
  root.hidden = !prompt;
  root.dataset.kind = prompt?.kind ?? "";
  if (!prompt) {
    root.replaceChildren();
    return;
  }
  const text = document.createElement("p");
  const buttons = [];
  const button = (label, handler) => {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = label;
    b.disabled = s.busy;
    b.addEventListener("click", handler);
    buttons.push(b);
  };
  const where = BOX_COUNT > 1 ? ` for the ${BOX_NAMES[prompt.box].toLowerCase()} box` : "";
  if (prompt.kind === "insurance") {
    text.textContent = `The dealer shows an ace. Insurance${where}? It costs half your bet and pays 2 to 1.`;
    button("Insurance", () => send("insurance", { take: true, box: prompt.box }));
    button("No insurance", () => send("insurance", { take: false, box: prompt.box }));
  } else if (prompt.kind === "even_money") {
    text.textContent = `You have blackjack against an ace. Even money${where}? Paid 1 to 1 now.`;
    button("Even money", () => send("even_money", { take: true, box: prompt.box }));
    button("No even money", () => send("even_money", { take: false, box: prompt.box }));
  } else if (prompt.kind === "safety") {
    text.textContent = `Safety net: hit on ${prompt.total}? Most players stand here.`;
    button("Hit anyway", () => {
      s.prompt = null;
      send("hit", { confirm: true });
    });
    button("Cancel", () => {
      s.prompt = null;
      render();
    });
  }
  root.replaceChildren(text, ...buttons);
}

function renderBetting() {
  $("bet-total").textContent = usdc(s.bets.reduce((a, b) => a + b, 0));
  $("deal").disabled = s.busy || !betOk();
  $("clear").disabled = s.busy || s.bets.every((b) => b === 0);
  $("x2").disabled = s.busy || s.bets.every((b) => b === 0) || s.bets.some((b) => b * 2 > maxBet);
  for (const chip of document.querySelectorAll("#chips button")) chip.disabled = s.busy;
  const picker = $("box-picker");
  picker.hidden = BOX_COUNT === 1;
  for (const b of picker.querySelectorAll("button")) {
    const i = Number(b.dataset.box);
    b.setAttribute("aria-pressed", String(i === s.box));
    b.querySelector(".amount").textContent = usdc(s.bets[i]);
  }
}

function render() {
  const view = s.round?.view ?? null;
  const over = !view || finished(view);
  const a = actions();
  const seated = Boolean(mySeat());
  const shared = !s.table.personal;
  $("table").dataset.state = !view ? "idle" : view.phase;
  $("status").textContent = statusText(view);
  renderDealer(view);
  renderBoxes(view);
  renderResult(view);

  const bettingNow = BANKED && (!shared || seated) && (a.has("deal") || (over && (s.changing || !s.lastBet.length || RULESET === "duel_classic")));
  const againNow = BANKED && over && !bettingNow && (!shared || seated) && s.lastBet.length > 0;
  $("betting").hidden = !bettingNow;
  $("again").hidden = !againNow;
  for (const id of ["change-bet", "rebet", "double-bet"]) $(id).disabled = s.busy;
  if (s.lastBet.some((bet) => toMicro(bet) * 2 > maxBet)) $("double-bet").disabled = true; // as X2: over the maximum
  if (bettingNow) renderBetting();

  const lobby = $("duel-lobby");
  lobby.hidden = !shared;
  if (shared) {
    const seat = mySeat();
    $("sit").hidden = Boolean(seat);
    $("sit").disabled = s.busy || tableFull(); // the server refuses a full table
    $("leave").hidden = !seat;
    $("ready").hidden = !DUEL || !seat;
    $("ready").disabled = s.busy || Boolean(seat?.ready) || !over;
    renderSeats();
  }

  const playing = view && !over && (view.phase === "playing" || view.phase === "dueling");
  const box = $("actions");
  box.hidden = !playing;
  for (const name of ["hit", "stand", "double", "split"]) {
    const button = $(name);
    button.hidden = DUEL && (name === "double" || name === "split");
    button.disabled = s.busy || !a.has(name) || Boolean(s.prompt);
  }
  renderPrompt();
  renderTimer();
}

function renderSeats() {
  const root = $("seats");
  root.hidden = false;
  const seats = s.table.seated.map((seat) => {
    const li = document.createElement("li");
    li.dataset.seat = seat.position;
    li.textContent = `Seat ${seat.position + 1}: ${who(String(seat.user_id))}${DUEL ? (seat.ready ? " — ready" : " — not ready") : ""}`;
    return li;
  });
  const list = document.createElement("ul");
  list.append(...seats);
  const title = document.createElement("h2");
  title.textContent = `Seats (${s.table.seated.length}/${s.table.seats})`;
  root.replaceChildren(title, list);
}

function renderTimer() {
  const el = $("timer");
  const view = s.round?.view;
  let deadline = null;
  let label = "";
  if (view && view.phase === "beacon" && view.beacon?.round_time) {
    deadline = view.beacon.round_time * 1000;
    label = "Cards in";
  } else if (view && !finished(view) && view.deadline_ms) {
    deadline = view.deadline_ms;
    label = view.phase === "betting" ? "Betting closes in" : view.phase === "dueling" ? "Timer" : "Turn timer";
  } else if (DUEL && s.table.lobby_deadline_ms && (!view || finished(view))) {
    deadline = s.table.lobby_deadline_ms;
    label = "The duel starts in";
  }
  if (!deadline) {
    el.hidden = true;
    return;
  }
  const left = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
  el.hidden = false;
  el.dataset.seconds = String(left);
  el.textContent = `${label} ${left} s`;
}

// ---- the round's versions (REST answers, WebSocket messages) ---------------------------

function apply(body) {
  if (!body?.view) return false;
  const current = s.round;
  if (current && current.round_id === body.round_id) {
    if (body.version <= current.version) return false;
  } else if (current && !finished(current.view) && body.round_id !== current.round_id) {
    if (finished(body.view)) return false; // an older round's message: keep the one in play
  }
  const wasOver = !current || finished(current.view);
  const cards = (v) => (v?.boxes ?? []).reduce((n, b) => n + b.hands.reduce((m, h) => m + h.cards.length, 0), 0) + (v?.dealer?.cards.length ?? 0);
  const more = cards(body.view) > (current?.round_id === body.round_id ? cards(current.view) : 0);
  s.round = { round_id: body.round_id, version: body.version, view: body.view };
  if (finished(body.view)) {
    if (!wasOver || current?.round_id !== body.round_id) {
      const mine = myBoxes(body.view).map((b) => b.bet);
      if (mine.length) s.lastBet = betsFromBoxes(body.view);
      s.changing = false;
      refreshBalance().catch(() => {});
      sound(body.view.settlement?.hands.some((h) => h.player_id === me && ["win", "blackjack", "split"].includes(h.outcome)) ? "win" : "end");
    }
    if (!s.table.personal) refreshTable();
  } else {
    if (more) sound("card");
    // A bet, a double, a split or insurance takes its stake from the wallet now: the balance shows it.
    if (myStake(body.view) !== (current?.round_id === body.round_id ? myStake(current.view) : 0)) {
      refreshBalance().catch(() => {});
    }
  }
  s.prompt = s.prompt?.kind === "safety" ? s.prompt : null;
  return true;
}

function betsFromBoxes(view) {
  const out = Array(BOX_COUNT).fill("0");
  for (const b of myBoxes(view)) if (b.box < BOX_COUNT) out[b.box] = b.bet;
  return out;
}

// ---- the WebSocket ---------------------------------------------------------------------

let socket = null;
let attempts = 0;
const waiting = new Map(); // command id -> {resolve, reject}

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const ws = new WebSocket(`${scheme}://${location.host}/ws/tables/${table.id}/`);
  socket = ws;
  window.__site.ws = ws;
  ws.addEventListener("open", () => {
    attempts = 0;
    metrics.socketOpen ??= performance.now();
    $("table").dataset.socket = "open";
    if (s.round) ws.send(JSON.stringify({ type: "resume", rounds: { [s.round.round_id]: s.round.version } }));
  });
  ws.addEventListener("message", (event) => {
    const msg = JSON.parse(event.data);
    metrics.messages += 1;
    if (window.__site.recordFrames) metrics.frames.push(event.data);
    if (msg.type === "round") {
      if (apply(msg)) {
        render();
        metrics.latencies.push(performance.now() - event.timeStamp);
      }
    } else if (msg.type === "result" || msg.type === "error") {
      const pending = waiting.get(msg.id);
      if (!pending) {
        if (msg.type === "error") showError(msg);
        return;
      }
      waiting.delete(msg.id);
      if (msg.type === "result") pending.resolve({ round: msg.round, at: event.timeStamp });
      else pending.reject(Object.assign(new ApiError(msg.status, { error: msg }), {}));
    }
  });
  ws.addEventListener("close", (event) => {
    if (socket !== ws) return;
    $("table").dataset.socket = "closed";
    for (const [, pending] of waiting) pending.reject(new Error("The connection dropped; try again."));
    waiting.clear();
    if (event.code === 4401 || event.code === 4404) {
      showError(new Error(event.code === 4404 ? "No such table." : "Please sign in again."));
      return;
    }
    attempts += 1;
    setTimeout(connect, Math.min(5000, 250 * attempts));
  });
}

window.__site.dropSocket = () => socket?.close();
window.__site.send = (type, args) => send(type, args); // the benchmark drives commands here

function overSocket(type, args) {
  return new Promise((resolve, reject) => {
    const id = newKey();
    waiting.set(id, { resolve, reject });
    socket.send(JSON.stringify({ type, id, ...args }));
  });
}

const REST_PATHS = { even_money: "even-money" };

function overRest(type, args) {
  if (type === "deal") return api(`/api/tables/${table.id}/deal/`, { method: "POST", body: args });
  const rid = args.round_id;
  const body = { ...args };
  delete body.round_id;
  return api(`/api/rounds/${encodeURIComponent(rid)}/${REST_PATHS[type] ?? type}/`, { method: "POST", body });
}

/** Send a command (WebSocket when open, REST otherwise); its answer is rendered at once. */
async function send(type, args = {}) {
  if (s.busy) return;
  showError(null);
  if (type !== "deal") args = { round_id: s.round?.round_id, ...args };
  s.busy = true;
  render();
  try {
    let body;
    let at = null; // when the answer's WebSocket message arrived
    if (socket && socket.readyState === WebSocket.OPEN) ({ round: body, at } = await overSocket(type, args));
    else body = await overRest(type, args);
    if (apply(body) && at !== null) {
      // The answer and the table's push carry the same version; whichever comes first is
      // the message that updates the DOM, so both count toward the message-to-DOM figure.
      s.busy = false;
      render();
      metrics.latencies.push(performance.now() - at);
    }
  } catch (err) {
    if (err.code === "confirm_required") {
      const hand = myHandInTurn(s.round?.view);
      s.prompt = { kind: "safety", total: totalText(hand?.total, hand?.soft) };
    } else {
      showError(err);
    }
  } finally {
    s.busy = false;
    render();
  }
}

// ---- controls ----------------------------------------------------------------------------

function wireBetting() {
  const chips = $("chips");
  for (const micro of CHIPS) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "chip";
    b.dataset.value = amount(micro);
    b.textContent = usdc(micro).replace(" USDC", "");
    b.setAttribute("aria-label", `${chipName(micro)}`);
    b.addEventListener("click", () => {
      if (s.bets[s.box] + micro > maxBet) return showError(new Error(`The maximum per box is ${usdc(maxBet)}.`));
      s.bets[s.box] += micro;
      sound("chip");
      render();
    });
    chips.append(b);
  }
  const picker = $("box-picker");
  BOX_NAMES.forEach((name, i) => {
    if (BOX_COUNT === 1) return;
    const b = document.createElement("button");
    b.type = "button";
    b.dataset.box = i;
    b.append(`${name} box `, Object.assign(document.createElement("span"), { className: "amount" }));
    b.setAttribute("aria-label", `${name} box`);
    b.addEventListener("click", () => {
      s.box = i;
      render();
    });
    picker.append(b);
  });
  $("clear").addEventListener("click", () => {
    s.bets.fill(0);
    render();
  });
  $("x2").addEventListener("click", () => {
    s.bets = s.bets.map((b) => b * 2);
    render();
  });
  $("deal").addEventListener("click", () => {
    if (!betOk()) return;
    const bets = s.bets.map(amount);
    while (bets.length > 1 && toMicro(bets[bets.length - 1]) === 0) bets.pop();
    s.lastBet = [...bets];
    send("deal", { mode: "bet", bets });
  });
  $("change-bet").addEventListener("click", () => {
    s.changing = true;
    s.bets = Array.from({ length: BOX_COUNT }, (_, i) => toMicro(s.lastBet[i] ?? "0"));
    render();
  });
  $("rebet").addEventListener("click", () => send("deal", { mode: "rebet" }));
  $("double-bet").addEventListener("click", () => send("deal", { mode: "double" }));
}

function wireActions() {
  $("hit").addEventListener("click", () => {
    const view = s.round?.view;
    const hand = myHandInTurn(view);
    const net = view?.my_options?.safety_net;
    if (net && hand && hand.total !== null && ((hand.soft && hand.total === 20) || (!hand.soft && hand.total >= 17))) {
      s.prompt = { kind: "safety", total: totalText(hand.total, hand.soft) };
      render();
      return;
    }
    send("hit", { confirm: false });
  });
  for (const name of ["stand", "double", "split"]) $(name).addEventListener("click", () => send(name));
  document.addEventListener("keydown", (event) => {
    if (event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const keys = { h: "hit", s: "stand", d: "double", p: "split" };
    const usable = (id) => {
      const b = $(id);
      return b && !b.disabled && !b.hidden && !b.closest("[hidden]");
    };
    const key = event.key.toLowerCase();
    if (keys[key] && usable(keys[key])) {
      event.preventDefault();
      $(keys[key]).click();
    } else if (event.key === "Enter" && !(event.target instanceof HTMLButtonElement && event.target.offsetParent)) {
      // (a focused button shown on the page takes its own Enter; one just hidden, such as a
      // prompt's answer, still holds the focus for a moment and must not swallow the key)
      const target = ["deal", "rebet"].find(usable);
      if (target) {
        event.preventDefault();
        $(target).click();
      }
    }
  });
}

async function tableAction(path, body = {}) {
  showError(null);
  s.busy = true;
  render();
  try {
    await api(`/api/tables/${table.id}/${path}/`, { method: "POST", body });
    await refreshTable();
  } catch (err) {
    showError(err);
  } finally {
    s.busy = false;
    render();
  }
}

function wireSeats() {
  $("sit").addEventListener("click", () => tableAction("sit"));
  $("leave").addEventListener("click", () => tableAction("leave"));
  $("ready").addEventListener("click", () => tableAction("ready", { ready: true }));
}

async function refreshTable() {
  const fresh = await api(`/api/tables/${table.id}/`);
  s.table = fresh;
  if (fresh.open_round && fresh.open_round !== s.round?.round_id && fresh.seated.some((x) => String(x.user_id) === me)) {
    try {
      if (apply(await api(`/api/rounds/${encodeURIComponent(fresh.open_round)}/`))) render();
    } catch {
      // not a participant of that round (it opened before we sat): the WebSocket shows it
    }
  }
  render();
}

// ---- options -----------------------------------------------------------------------------

function applyPrefs() {
  const p = s.prefs;
  for (const input of document.querySelectorAll("#options input[data-pref]")) input.checked = Boolean(p[input.dataset.pref]);
  document.body.classList.toggle("left-handed", p.left_handed);
  document.body.dataset.animation = String(p.animation);
  $("table").dataset.felt = p.felt;
  $("felt-name").textContent = p.felt;
  $("felt").setAttribute("aria-label", `Felt: ${p.felt}`);
}

async function savePrefs(changes) {
  showError(null);
  try {
    s.prefs = await api("/api/me/preferences/", { method: "PATCH", body: changes });
  } catch (err) {
    showError(err);
  }
  applyPrefs();
}

function wireOptions() {
  for (const input of document.querySelectorAll("#options input[data-pref]")) {
    input.addEventListener("change", () => savePrefs({ [input.dataset.pref]: input.checked }));
  }
  $("felt").addEventListener("click", () => {
    const next = FELTS[(FELTS.indexOf(s.prefs.felt) + 1) % FELTS.length];
    savePrefs({ felt: next });
  });
}

// ---- fairness: the next round's commitment and your client seed ----------------------------

async function refreshFairness() {
  try {
    const next = await api(`/api/fairness/commitment/?table=${encodeURIComponent(table.id)}`);
    $("next-nonce").textContent = String(next.nonce);
    $("next-commitment").textContent = next.commitment;
  } catch (err) {
    if (err.code !== "round_in_progress") throw err;
    $("next-nonce").textContent = "…";
    $("next-commitment").textContent = "published when the round in play ends";
  }
}

function wireFairness() {
  $("fairness").addEventListener("toggle", () => {
    if ($("fairness").open) refreshFairness().catch(showError);
  });
  $("set-seed").addEventListener("click", async () => {
    showError(null);
    $("seed-status").textContent = "";
    try {
      const saved = await api("/api/fairness/client-seed/", {
        method: "PUT", body: { client_seed: $("client-seed").value },
      });
      $("client-seed").value = saved.client_seed;
      $("seed-status").textContent = `Your next round uses client seed ${saved.client_seed}.`;
      await refreshFairness();
    } catch (err) {
      showError(err);
    }
  });
}

// ---- sound (WebAudio, nothing downloaded) ------------------------------------------------

let audio = null;
function sound(kind) {
  if (!s.prefs?.audio) return;
  try {
    audio ??= new AudioContext();
    if (audio.state === "suspended") audio.resume().catch(() => {});
    const tones = { card: [660, 0.05], chip: [880, 0.04], win: [990, 0.25], end: [440, 0.15] };
    const [freq, length] = tones[kind] ?? [500, 0.05];
    const osc = audio.createOscillator();
    const gain = audio.createGain();
    osc.frequency.value = freq;
    gain.gain.setValueAtTime(0.08, audio.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.0001, audio.currentTime + length);
    osc.connect(gain).connect(audio.destination);
    osc.start();
    osc.stop(audio.currentTime + length);
  } catch {
    // no audio device: the game plays on silently
  }
}

// ---- start -------------------------------------------------------------------------------

function limitsText() {
  if (DUEL) return `Stake ${usdc(toMicro(table.stake))} per player · ${table.seats} seats`;
  return `Bet ${usdc(minBet)} – ${usdc(maxBet)} per box`;
}

async function start() {
  $("limits").textContent = limitsText();
  wireBetting();
  wireActions();
  wireSeats();
  wireOptions();
  wireFairness();
  render();
  metrics.firstRender = performance.now(); // ms since navigation start: the page is drawn
  connect();
  try {
    s.prefs = await api("/api/me/preferences/");
    applyPrefs();
    $("client-seed").value = (await api("/api/fairness/client-seed/")).client_seed;
    if (!s.lastBet.length && s.prefs.last_bet?.length) {
      s.lastBet = s.prefs.last_bet;
    }
    render();
  } catch (err) {
    showError(err);
  }
  setInterval(() => {
    renderTimer();
    if (!s.table.personal && (!s.round || finished(s.round.view))) refreshTable().catch(() => {});
  }, DUEL ? 500 : 1000);
}

start();
