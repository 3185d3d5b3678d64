// Pages with nothing of their own to run: the shared header (balance, sign out) only.
import "./common.js";
