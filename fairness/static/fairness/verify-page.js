// The verify page: fetch a proof (or take a pasted one, or bare seeds) and check it here.
import { hashSeed, shoeCards } from "./shoe.js";
import { verifyBundle, verifyReceiptOnly } from "./verifier.js";

const $ = (id) => document.getElementById(id);

const STATE_MARKS = { checked: "✓", failed: "✗", "not checked": "–", "none in this round": "·" };

/** The proof of play: which play checks ran, in words, and what each found. */
function showPlay(play) {
  const summary = $("play-summary");
  const list = $("play");
  if (!play) {
    summary.textContent = "";
    list.replaceChildren();
    return;
  }
  summary.dataset.state = play.ran ? (play.ok ? "ok" : "failed") : "not-run";
  summary.textContent = !play.ran
    ? `Play: ${play.why}.`
    : play.ok
      ? `Play: the round was decided again here from the players' ${play.decisions} choices; all ${play.events} recorded events are the rules' own.`
      : "Play: the recorded round is not what the rules make of the players' choices (see the first difference above).";
  list.replaceChildren(...play.checks.map((c) => {
    const li = document.createElement("li");
    li.dataset.check = c.id;
    li.dataset.state = c.state;
    li.textContent = `${STATE_MARKS[c.state] ?? ""} ${c.text}`;
    return li;
  }));
}

/** Micro-USDC (an integer, as receipts keep it) in words: "1.50 USDC". */
function usdcWords(micro) {
  const whole = Math.floor(Math.abs(micro) / 1e6);
  const frac = String(Math.abs(micro) % 1e6).padStart(6, "0").replace(/0{1,4}$/, "").padEnd(2, "0");
  return `${micro < 0 ? "-" : ""}${whole}.${frac} USDC`;
}

/** What a voided round would have paid (reversed payouts), in words. */
function voidWords(payouts) {
  const paid = (payouts.reversed_payouts ?? []).filter((p) => p.amount > 0);
  const refunds = (payouts.refunds ?? []).reduce((sum, r) => sum + r.amount, 0);
  const would = paid.length
    ? `It would have paid ${paid.map((p) => `${usdcWords(p.amount)} to player ${p.player_id}`).join(", ")}.`
    : "It had paid nothing when it was voided.";
  return `Every stake was refunded (${usdcWords(refunds)}). ${would}`;
}

function show(result, title, receipt = null) {
  const verdict = $("verdict");
  verdict.dataset.state = result.ok ? "ok" : "failed";
  const played = result.play?.ran && result.play.ok ? " The play, decided again here, is the rules' own." : "";
  verdict.textContent = result.ok
    ? `Verified: ${title} is fair (${result.cards.length} cards match).${played}`
    : `FAILED: ${title} does not verify (${result.failures.length} problem${result.failures.length === 1 ? "" : "s"}).`;
  if (result.ok && receipt?.outcome === "voided") {
    // A void is not a fair result to be paid: say so first, with its reason.
    verdict.dataset.state = "voided";
    verdict.textContent = `Voided: ${title} was voided (${receipt.payouts?.reason ?? "no reason given"}). ` +
      `${voidWords(receipt.payouts ?? {})} Its cards and seed verify (${result.cards.length} cards match).`;
  }
  showPlay(result.play);
  const failures = $("failures");
  failures.replaceChildren(...result.failures.map((f) => {
    const li = document.createElement("li");
    li.textContent = f;
    return li;
  }));
  const checks = $("checks");
  checks.replaceChildren();
  for (const [name, ok] of Object.entries(result.checks ?? {})) {
    const dt = document.createElement("dt");
    dt.textContent = name;
    const dd = document.createElement("dd");
    dd.textContent = ok ? "✓ ok" : "✗ failed";
    dd.dataset.check = name;
    dd.dataset.ok = String(ok);
    checks.append(dt, dd);
  }
  const body = $("cards").querySelector("tbody");
  body.replaceChildren(...result.cards.map((c) => {
    const tr = document.createElement("tr");
    tr.className = c.ok ? "match" : "mismatch";
    for (const value of [c.index, c.position, c.dealt ?? "", c.expected ?? "", c.ok ? "✓" : "✗"]) {
      const td = document.createElement("td");
      td.textContent = String(value);
      tr.append(td);
    }
    return tr;
  }));
}

function working(text) {
  const verdict = $("verdict");
  verdict.dataset.state = "working";
  verdict.textContent = text;
  $("failures").replaceChildren();
  $("checks").replaceChildren();
  $("cards").querySelector("tbody").replaceChildren();
  showPlay(null);
}

/** A round still in play has no proof yet: that is not a failure. */
function pending(id) {
  working("");
  const verdict = $("verdict");
  verdict.dataset.state = "pending";
  verdict.textContent = `Round ${id} is still in play: its proof comes when it ends. Come back after the round.`;
}

function problem(message) {
  show({ ok: false, failures: [message], cards: [], checks: {} }, "the input");
}

async function publishedKeys() {
  const response = await fetch("/api/fairness/keys");
  if (!response.ok) throw new Error(`could not load the published keys (HTTP ${response.status})`);
  const body = await response.json();
  return Object.fromEntries(body.keys.map((k) => [k.key_id, k.public_key]));
}

async function verifyInput(input, title) {
  let keys = null;
  try {
    keys = await publishedKeys();
  } catch {
    keys = null; // offline: the line's own public key is used, checked against its key id
  }
  const line = input.bundle ?? input;
  const result = Array.isArray(line.events)
    ? await verifyBundle(line, keys)
    : await verifyReceiptOnly(line, keys);
  show(result, title, line.receipt ?? null);
}

$("by-round").addEventListener("submit", async (event) => {
  event.preventDefault();
  const id = $("round-id").value.trim();
  working(`Fetching round ${id}…`);
  try {
    const response = await fetch(`/api/fairness/rounds/${encodeURIComponent(id)}`);
    const body = await response.json();
    if (response.status === 409 && body.error?.code === "proof_not_ready") {
      pending(id);
      return;
    }
    if (!response.ok) {
      problem(`${body.error?.code ?? "error"}: ${body.error?.message ?? response.status}`);
      return;
    }
    await verifyInput(body, `round ${id}`);
  } catch (err) {
    problem(`could not fetch the round: ${err.message}`);
  }
});

$("by-paste").addEventListener("submit", async (event) => {
  event.preventDefault();
  working("Verifying…");
  let input;
  try {
    input = JSON.parse($("paste").value);
  } catch (err) {
    problem(`the pasted text is not JSON (${err.message})`);
    return;
  }
  const id = (input.bundle ?? input).receipt?.round_id ?? input.round_id ?? "the pasted round";
  await verifyInput(input, `round ${id}`);
});

$("by-seeds").addEventListener("submit", async (event) => {
  event.preventDefault();
  working("Rebuilding the shoe…");
  const seed = $("server-seed").value.trim();
  const material = $("client-seed").value.trim();
  const nonce = $("nonce").value.trim();
  const commitment = $("commitment").value.trim();
  const count = Number($("count").value || 20);
  try {
    const cards = await shoeCards(seed, material, nonce, count);
    const failures = [];
    const checks = {};
    if (commitment) {
      const hashed = await hashSeed(seed);
      checks.seed = hashed === commitment;
      if (!checks.seed) failures.push(`seed: sha256 of server seed ${seed} is ${hashed}, not the commitment ${commitment}`);
    }
    const rows = cards.map((card, i) => ({ index: i, position: i, dealt: "", expected: card, ok: true }));
    const play = { ran: false, why: "not run: seeds alone have no play to check", checks: [] };
    show({ ok: failures.length === 0, failures, cards: rows, checks, play }, `the shoe of nonce ${nonce}`);
  } catch (err) {
    problem(err.message);
  }
});

// /fairness/verify/?round=ID (the history's Verify links): verify that round at once.
const asked = new URLSearchParams(location.search).get("round");
if (asked) {
  $("round-id").value = asked;
  $("by-round").requestSubmit();
}
