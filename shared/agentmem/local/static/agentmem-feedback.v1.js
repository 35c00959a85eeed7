/*! agentmem-feedback v1: an editor's 👍 / 👎 on an agent's run, as a standard web component.
 *
 *   <script src="http://127.0.0.1:8765/static/agentmem-feedback.v1.js" defer></script>
 *   <agentmem-feedback agent-id="brand-auditor" run-id="run_9f0c..." endpoint="/agentmem"></agentmem-feedback>
 *
 * `endpoint` is the base URL the widget calls (empty: this page's own origin). It sends
 *   POST {endpoint}/v1/agents/{agentId}/runs/{runId}/feedback   with an Idempotency-Key
 *   GET  {endpoint}/v1/agents/{agentId}/runs/{runId}            to follow the lesson until it is indexed
 * so the endpoint is agentmem itself (a page of the same origin) or the host's own backend, which
 * authenticates the editor and forwards these two calls signed for the tenant's API.
 *
 * No framework, no build step, no inline style or script (it runs under a strict CSP; its styles
 * are a constructed stylesheet). The host may set `element.headers` (extra request headers, e.g.
 * Authorization) and `element.credentials` (fetch's credentials mode, default "same-origin").
 * Events (bubbling, composed): agentmem-feedback-sent {feedbackId, memoryId, rating},
 * agentmem-feedback-indexed {memoryId}, agentmem-feedback-error {status, code, message}.
 * Theming: --agentmem-accent, --agentmem-radius, and the parts form, legend, choice, comment,
 * send, status, error.
 */
(() => {
  "use strict";
  const TAG = "agentmem-feedback";
  const VERSION = "1.0.0";
  if (window.customElements.get(TAG)) return;

  const MAX_COMMENT = 4000;
  // Follows the lesson this long, then says it will be used once indexed.
  const POLL_DELAYS_MS = [250, 400, 600, 800, 1000, 1500];
  const POLL_STEADY_MS = 2000;
  const POLL_GIVE_UP_MS = 60000;
  const MAX_CONFLICT_RETRIES = 5;

  const CSS = `
:host { display: block; font: inherit; color: inherit; --agentmem-accent: #1d4ed8; --agentmem-radius: 8px; }
:host([hidden]) { display: none; }
* { box-sizing: border-box; }
form { display: grid; gap: 0.6rem; margin: 0; }
fieldset { border: 0; margin: 0; padding: 0; min-width: 0; }
legend { font-weight: 600; padding: 0; margin-bottom: 0.4rem; }
.choices { display: flex; flex-wrap: wrap; gap: 0.5rem; }
button { font: inherit; cursor: pointer; border-radius: var(--agentmem-radius); min-height: 44px; padding: 0.45rem 0.9rem; }
button:disabled { cursor: not-allowed; opacity: 1; }
.choice { background: #ffffff; color: #14171c; border: 2px solid #8a93a3; }
.choice[aria-pressed="true"].up { background: #e2f4e8; color: #135c2c; border-color: #135c2c; }
.choice[aria-pressed="true"].down { background: #fbe7e5; color: #8f1d15; border-color: #8f1d15; }
.choice:disabled { background: #eef0f3; color: #353c48; }
label { font-weight: 600; }
.hint { font-weight: 400; color: #485163; }
p.hint { margin: 0.15rem 0 0.4rem; font-size: 0.875em; }
textarea { font: inherit; width: 100%; min-height: 4.5rem; padding: 0.5rem; border: 1px solid #8a93a3;
  border-radius: var(--agentmem-radius); background: #ffffff; color: #14171c; resize: vertical; }
textarea:disabled { background: #eef0f3; color: #353c48; }
.actions { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; }
.send { background: var(--agentmem-accent); color: #ffffff; border: 2px solid var(--agentmem-accent); font-weight: 600; }
.send:disabled { background: #5b6577; border-color: #5b6577; }
.again { background: #ffffff; color: #14171c; border: 2px solid #8a93a3; }
:focus-visible { outline: 3px solid var(--agentmem-accent); outline-offset: 2px; }
.status, .error { margin: 0; }
.status:not(:empty) { padding: 0.4rem 0.6rem; border-radius: var(--agentmem-radius); background: #e7edfc; color: #1e2a78; }
.status.done:not(:empty) { background: #e2f4e8; color: #135c2c; }
.error:not(:empty) { padding: 0.4rem 0.6rem; border-radius: var(--agentmem-radius); background: #fdecea; color: #8f1d15; }
.status:focus { outline: none; }
[hidden] { display: none !important; }
@media (prefers-reduced-motion: no-preference) { button { transition: background-color 120ms; } }
`;

  let sheet = null;
  function stylesheet() {
    if (!sheet) {
      sheet = new CSSStyleSheet();
      sheet.replaceSync(CSS);
    }
    return sheet;
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "text") node.textContent = value;
      else if (key === "class") node.className = value;
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    node.append(...children);
    return node;
  }

  // An Idempotency-Key under the contract's id rules; getRandomValues works outside secure contexts too.
  function newKey() {
    const bytes = new Uint8Array(16);
    window.crypto.getRandomValues(bytes);
    return "fb-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  const segment = (value) => encodeURIComponent(String(value));
  const sleep = (ms) => new Promise((resolve) => window.setTimeout(resolve, ms));

  class FeedbackError extends Error {
    constructor(status, code, message, retryAfter) {
      super(message);
      this.status = status;
      this.code = code;
      this.retryAfter = retryAfter;
    }
  }

  let instances = 0;

  class AgentmemFeedback extends HTMLElement {
    static get observedAttributes() { return ["agent-id", "run-id", "endpoint"]; }
    static get version() { return VERSION; }

    constructor() {
      super();
      this.headers = {};
      this.credentials = "same-origin";
      instances += 1;
      const id = (name) => `agentmem-fb-${instances}-${name}`;
      const root = this.attachShadow({ mode: "open" });
      root.adoptedStyleSheets = [stylesheet()];

      this._up = el("button", { type: "button", class: "choice up", part: "choice", "aria-pressed": "false" },
        el("span", { "aria-hidden": "true", text: "👍 " }), "Thumbs up");
      this._down = el("button", { type: "button", class: "choice down", part: "choice", "aria-pressed": "false" },
        el("span", { "aria-hidden": "true", text: "👎 " }), "Thumbs down");
      this._comment = el("textarea", { id: id("comment"), part: "comment", maxlength: MAX_COMMENT, rows: "3",
        "aria-describedby": id("hint"), autocomplete: "off" });
      this._send = el("button", { type: "submit", class: "send", part: "send", text: "Send feedback" });
      this._again = el("button", { type: "button", class: "again", text: "Give another verdict", hidden: true });
      this._status = el("p", { class: "status", part: "status", role: "status", "aria-live": "polite", tabindex: "-1" });
      this._error = el("p", { class: "error", part: "error", role: "alert" });
      this._legend = el("legend", { part: "legend", text: "Your verdict on this run" });
      this._form = el("form", { part: "form", novalidate: true, "aria-label": "Feedback on this run" },
        el("fieldset", null, this._legend, el("div", { class: "choices" }, this._up, this._down)),
        el("div", null,
          el("label", { for: id("comment") }, "What should the agent learn? ", el("span", { class: "hint", text: "(optional)" })),
          el("p", { class: "hint", id: id("hint"), text: "Your words become the lesson. Up to 4,000 characters." }),
          this._comment),
        el("div", { class: "actions" }, this._send, this._again),
        this._status,
        this._error);
      root.append(this._form);

      this._up.addEventListener("click", () => this._choose("up"));
      this._down.addEventListener("click", () => this._choose("down"));
      this._form.addEventListener("submit", (event) => { event.preventDefault(); this._submit(); });
      this._again.addEventListener("click", () => { this._reset(); this._up.focus(); });
      this._reset();
    }

    attributeChangedCallback(name, oldValue, newValue) {
      // Another run (or another server) is another verdict: start over, never reuse a key across runs.
      if (oldValue !== newValue && name !== "endpoint") this._reset();
    }

    disconnectedCallback() { this._generation += 1; }

    get rating() { return this._rating; }

    _reset() {
      this._generation = (this._generation || 0) + 1;
      this._rating = null;
      this._key = null;
      this._keyFor = null;
      this._busy = false;
      this._up.setAttribute("aria-pressed", "false");
      this._down.setAttribute("aria-pressed", "false");
      this._comment.value = "";
      this._setEnabled(true);
      this._send.hidden = false;
      this._again.hidden = true;
      this._status.textContent = "";
      this._status.classList.remove("done");
      this._error.textContent = "";
    }

    _choose(rating) {
      if (this._busy) return;
      this._rating = rating;
      this._up.setAttribute("aria-pressed", String(rating === "up"));
      this._down.setAttribute("aria-pressed", String(rating === "down"));
      this._error.textContent = "";
    }

    _setEnabled(enabled) {
      for (const control of [this._up, this._down, this._comment, this._send]) control.disabled = !enabled;
    }

    _url(path) {
      const base = (this.getAttribute("endpoint") || "").replace(/\/+$/, "");
      return new URL(base + path, document.baseURI).href;
    }

    async _call(method, path, body, extraHeaders) {
      const headers = { Accept: "application/json", ...(this.headers || {}), ...(extraHeaders || {}) };
      const init = { method, headers, cache: "no-store", credentials: this.credentials || "same-origin" };
      if (body !== undefined) {
        headers["Content-Type"] = "application/json";
        init.body = JSON.stringify(body);
      }
      let response;
      try {
        response = await window.fetch(this._url(path), init);
      } catch (exc) {
        throw (await this._refusalBehindFailedFetch()) ||
          new FeedbackError(0, "network", "Could not reach the feedback service. Check the connection and send again.");
      }
      const text = await response.text();
      let parsed = null;
      try { parsed = text ? JSON.parse(text) : null; } catch (_) { parsed = null; }
      if (!response.ok) {
        const err = parsed && parsed.error ? parsed.error : {};
        const retryAfter = Number(response.headers.get("Retry-After"));
        throw new FeedbackError(response.status, err.code || `http_${response.status}`,
          err.message || `The feedback service answered ${response.status}.`,
          Number.isFinite(retryAfter) ? retryAfter : null);
      }
      return parsed;
    }

    // The browser hides why a cross-origin call failed. A simple GET (no custom header, so no preflight)
    // asks the server whether it refuses this page: agentmem answers a refusal readably (status, code,
    // message). Null when that says nothing (unreachable, or not a refusal): then the network is the cause.
    async _refusalBehindFailedFetch() {
      let response;
      try {
        response = await window.fetch(this._url("/v1/health"), { method: "GET", cache: "no-store", credentials: "omit" });
      } catch (_) {
        return null;
      }
      if (response.status !== 401 && response.status !== 403) return null;
      let parsed = null;
      try { parsed = JSON.parse(await response.text()); } catch (_) { parsed = null; }
      const err = parsed && parsed.error ? parsed.error : {};
      return new FeedbackError(response.status, err.code || `http_${response.status}`,
        err.message || `The feedback service answered ${response.status}.`, null);
    }

    _fire(name, detail) {
      this.dispatchEvent(new CustomEvent(name, { detail, bubbles: true, composed: true }));
    }

    async _submit() {
      if (this._busy) return;  // a double click sends once; the key covers a retry after a lost answer
      this._error.textContent = "";
      const agentId = this.getAttribute("agent-id");
      const runId = this.getAttribute("run-id");
      if (!agentId || !runId) {
        this._error.textContent = "This feedback form is missing its agent-id or run-id.";
        return;
      }
      if (!this._rating) {
        this._error.textContent = "Choose Thumbs up or Thumbs down first.";
        this._up.focus();
        return;
      }
      const comment = this._comment.value.trim();
      const body = comment ? { rating: this._rating, comment } : { rating: this._rating };
      const fingerprint = JSON.stringify([agentId, runId, body]);
      // The same verdict sent again (after a failure) keeps its key, so it can only ever make one lesson.
      if (this._keyFor !== fingerprint) { this._key = newKey(); this._keyFor = fingerprint; }
      const generation = this._generation;
      this._busy = true;
      this._setEnabled(false);
      this._status.textContent = "Sending your feedback…";
      const path = `/v1/agents/${segment(agentId)}/runs/${segment(runId)}`;
      let receipt = null;
      try {
        for (let attempt = 0; ; attempt += 1) {
          try {
            receipt = await this._call("POST", `${path}/feedback`, body, { "Idempotency-Key": this._key });
            break;
          } catch (err) {
            // 409 with Retry-After: the same key is still being processed; its answer comes on a retry.
            if (!(err.status === 409 && err.retryAfter !== null) || attempt >= MAX_CONFLICT_RETRIES) throw err;
            await sleep(Math.min(5, Math.max(0.2, err.retryAfter)) * 1000);
          }
        }
      } catch (err) {
        if (generation !== this._generation) return;
        this._busy = false;
        this._setEnabled(true);
        this._status.textContent = "";
        this._error.textContent = this._explain(err);
        this._fire("agentmem-feedback-error", { status: err.status, code: err.code, message: err.message });
        return;
      }
      if (generation !== this._generation) return;
      const symbol = this._rating === "up" ? "👍" : "👎";
      this._send.hidden = true;
      this._again.hidden = false;
      this._status.textContent = `Thanks: your ${symbol} is recorded. Its lesson is being indexed…`;
      this._status.focus();
      this._fire("agentmem-feedback-sent", { feedbackId: receipt.feedbackId, memoryId: receipt.memoryId, rating: this._rating });
      this._follow(path, receipt.memoryId, generation);
    }

    _explain(err) {
      if (err.status === 403 && err.code === "memory_disabled") return "Memory is not enabled for this agent, so feedback is not taken.";
      if (err.status === 401 || err.status === 403) {
        return `The feedback service refused this page (HTTP ${err.status} ${err.code}): ${err.message}`;
      }
      if (err.status === 404) return "This run is not known to the memory service.";
      if (err.status === 400) return `The feedback was not accepted: ${err.message}`;
      if (err.status === 409) return "The feedback service is still busy with this verdict. Send again in a moment.";
      return `${err.message} Nothing was lost: send again to retry.`;
    }

    async _follow(path, memoryId, generation) {
      const started = Date.now();
      for (let attempt = 0; Date.now() - started < POLL_GIVE_UP_MS; attempt += 1) {
        await sleep(attempt < POLL_DELAYS_MS.length ? POLL_DELAYS_MS[attempt] : POLL_STEADY_MS);
        if (generation !== this._generation) return;
        let run;
        try {
          run = await this._call("GET", path);
        } catch (_) {
          continue;  // a failed look is not a failed feedback: keep following
        }
        if (generation !== this._generation) return;
        const given = (run && run.feedback || []).find((f) => f.memoryId === memoryId);
        if (given && given.lessonStatus === "indexed") {
          this._status.classList.add("done");
          this._status.textContent = "Lesson indexed: the agent uses it from its next similar run.";
          this._fire("agentmem-feedback-indexed", { memoryId });
          return;
        }
      }
      if (generation === this._generation) {
        this._status.textContent = "Your feedback is saved. Indexing is taking longer than usual; the lesson is used once it is indexed.";
      }
    }
  }

  window.customElements.define(TAG, AgentmemFeedback);
})();
