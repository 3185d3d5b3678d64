// What every page of the player site shares: API calls (session, CSRF, Idempotency-Key),
// USDC amounts (6-decimal strings in, integer micro-USDC inside), errors shown as their message.

export const $ = (id) => document.getElementById(id);
export const MICRO = 1_000_000;

/** "12.500000" -> 12500000 (integer micro-USDC; the API's amounts are exact decimals). */
export function toMicro(text) {
  const [whole, frac = ""] = String(text).replace("-", "").split(".");
  const value = Number(whole) * MICRO + Number((frac + "000000").slice(0, 6));
  return String(text).startsWith("-") ? -value : value;
}

/** 12500000 -> "12.500000", the form every request takes. */
export function amount(micro) {
  const sign = micro < 0 ? "-" : "";
  const m = Math.abs(micro);
  return `${sign}${Math.floor(m / MICRO)}.${String(m % MICRO).padStart(6, "0")}`;
}

/** 12500000 -> "12.50 USDC" (at least two places, more when they matter). */
export function usdc(micro) {
  const text = amount(micro).replace(/(\.\d\d\d*?)0+$/, "$1");
  const [whole, frac] = text.split(".");
  return `${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",")}.${frac.padEnd(2, "0")} USDC`;
}

/** A hand's total as players read it: "" before its cards, "blackjack" (the first two cards of
 * an unsplit hand, as the outcome and the verify page say), "24 bust", "soft 17", "17". */
export function totalText(total, soft, cards = 0, split = false) {
  if (!total) return ""; // no total yet, or no card yet (a seat's bet before the deal totals 0)
  if (total === 21 && cards === 2 && !split) return "blackjack";
  if (total > 21) return `${total} bust`;
  return soft ? `soft ${total}` : String(total);
}

/** A settled hand's outcome in words. */
export const OUTCOMES = {
  win: "won", lose: "lost", push: "push", blackjack: "blackjack", bust: "bust", even_money: "even money",
  split: "shared the pot",
};

function cookie(name) {
  const hit = document.cookie.split("; ").find((c) => c.startsWith(`${name}=`));
  return hit ? decodeURIComponent(hit.slice(name.length + 1)) : "";
}

let keys = 0;
export function newKey() {
  if (globalThis.crypto?.randomUUID) return crypto.randomUUID();
  keys += 1;
  return `k-${Date.now().toString(36)}-${keys}-${Math.random().toString(36).slice(2)}`;
}

export class ApiError extends Error {
  constructor(status, body) {
    const error = body?.error ?? {};
    super(error.message || `HTTP ${status}`);
    this.status = status;
    this.code = error.code ?? "error";
    this.details = error.details ?? {};
  }
}

/** One API call; resolves to the JSON body, throws ApiError with the server's message. */
export async function api(path, { method = "GET", body } = {}) {
  const headers = { Accept: "application/json" };
  if (method !== "GET") {
    headers["Content-Type"] = "application/json";
    headers["X-CSRFToken"] = cookie("csrftoken");
    if (method === "POST") headers["Idempotency-Key"] = newKey();
  }
  const response = await fetch(path, {
    method, headers, credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const data = text ? JSON.parse(text) : null;
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

/** A server error (or any failure) shown as its message, never silently. */
export function showError(err) {
  const box = $("error");
  if (!box) return;
  if (!err) {
    box.hidden = true;
    box.textContent = "";
    return;
  }
  box.hidden = false;
  box.textContent = err.message ?? String(err);
  box.dataset.code = err.code ?? "";
}

export const signedIn = () => document.body.dataset.signedIn === "true";
export const playerId = () => document.body.dataset.playerId;

export async function refreshBalance() {
  if (!signedIn()) return null;
  const wallet = await api("/api/wallet/balance/");
  const available = toMicro(wallet.available);
  const el = $("balance");
  if (el) el.textContent = usdc(available);
  return wallet;
}

function wireShell() {
  $("sign-out")?.addEventListener("click", async () => {
    try {
      await api("/api/auth/logout/", { method: "POST", body: {} });
      location.assign("/play/");
    } catch (err) {
      showError(err);
    }
  });
  refreshBalance().catch(showError);
}

wireShell();
