"use strict";
(() => {
  const TOKEN_KEY = "agentmem.wall.token";
  const UNDO_MS = 5000;
  const PAGE_SIZE = 20;
  const SNIPPET_CHARS = 280;
  const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;

  const byId = (id) => document.getElementById(id);
  const agentsBox = byId("agents");
  const statusBox = byId("status");
  const alertBox = byId("alert");

  // Every piece of text from the API goes through text nodes or attributes: never innerHTML.
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") el.className = value;
      else if (key === "text") el.textContent = value;
      else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
      else el.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      el.append(child instanceof Node ? child : String(child));
    }
    return el;
  }

  // replaceChildren() would print a skipped (null) child as the text "null".
  function fill(el, ...children) {
    el.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
    return el;
  }

  function announce(message) {
    // Cleared first so the same message twice is read twice.
    statusBox.textContent = "";
    window.setTimeout(() => { statusBox.textContent = message; }, 30);
  }

  function showAlert(message, details) {
    alertBox.replaceChildren(h("p", { text: message }));
    if (details && details.length) {
      alertBox.append(h("ul", { class: "plain-list" },
        details.map((d) => h("li", { text: d.field ? `${d.field}: ${d.message}` : String(d.message || d) }))));
    }
    alertBox.hidden = false;
  }

  function clearAlert() { alertBox.hidden = true; alertBox.replaceChildren(); }

  // ---- API ---------------------------------------------------------------------------------------

  class ApiError extends Error {
    constructor(status, code, message, details) {
      super(message);
      this.status = status;
      this.code = code;
      this.details = details || [];
    }
  }

  async function errorOf(response) {
    let body = null;
    try { body = await response.json(); } catch (_) { /* not JSON: described by the status alone */ }
    const err = body && body.error ? body.error : {};
    return new ApiError(response.status, err.code || `http_${response.status}`,
      err.message || `${response.status} ${response.statusText}`, err.details);
  }

  function segment(value) { return encodeURIComponent(String(value)); }

  function storedToken() {
    try { return window.sessionStorage.getItem(TOKEN_KEY); } catch (_) { return null; }
  }

  function storeToken(token) {
    try {
      if (token) window.sessionStorage.setItem(TOKEN_KEY, token);
      else window.sessionStorage.removeItem(TOKEN_KEY);
    } catch (_) { /* storage disabled: the token lasts until the page is reloaded */ }
    memoryToken = token;
    byId("forget-token").hidden = !token;
  }

  let memoryToken = storedToken();

  async function api(method, path, options = {}) {
    for (;;) {
      const sentToken = memoryToken;
      const headers = { Accept: "application/json", ...(options.headers || {}) };
      if (sentToken) headers.Authorization = `Bearer ${sentToken}`;
      const init = { method, headers, cache: "no-store", keepalive: Boolean(options.keepalive) };
      if (options.body !== undefined) {
        headers["Content-Type"] = "application/json";
        init.body = JSON.stringify(options.body);
      }
      let response;
      try {
        response = await fetch(path, init);
      } catch (exc) {
        throw new ApiError(0, "network", `Could not reach the server (${exc.message}).`);
      }
      if (response.status === 403) {
        const err = await errorOf(response);
        if (err.code !== "forbidden") throw err;
        // Another request may already have asked for a token while this one was in flight.
        if (memoryToken && memoryToken !== sentToken) continue;
        if (await askToken(Boolean(sentToken))) continue;
        throw err;
      }
      if (!response.ok) throw await errorOf(response);
      if (response.status === 204) return null;
      const text = await response.text();
      return text ? JSON.parse(text) : null;
    }
  }

  let tokenQuestion = null;

  function askToken(rejected) {
    if (tokenQuestion) return tokenQuestion;
    const dialog = byId("token-dialog");
    const input = byId("token-input");
    byId("token-title").textContent = rejected ? "That token was not accepted" : "API token needed";
    input.value = "";
    tokenQuestion = new Promise((resolve) => {
      const finish = (accepted) => {
        byId("token-form").removeEventListener("submit", onSubmit);
        byId("token-cancel").removeEventListener("click", onCancel);
        dialog.removeEventListener("cancel", onCancel);
        if (dialog.open) dialog.close();
        tokenQuestion = null;
        resolve(accepted);
      };
      const onSubmit = (event) => {
        event.preventDefault();
        const token = input.value.trim();
        if (!token) return;
        storeToken(token);
        finish(true);
      };
      const onCancel = (event) => { event.preventDefault(); finish(false); };
      byId("token-form").addEventListener("submit", onSubmit);
      byId("token-cancel").addEventListener("click", onCancel);
      dialog.addEventListener("cancel", onCancel);
      dialog.showModal();
      input.focus();
    });
    return tokenQuestion;
  }

  function describe(err) {
    if (!(err instanceof ApiError)) return String(err && err.message ? err.message : err);
    if (err.status === 403 && err.code === "forbidden") return "Not allowed: the server refused the token.";
    return err.message;
  }

  // ---- formatting --------------------------------------------------------------------------------

  const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
  const relativeFormat = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });

  function timeElement(iso, prefix) {
    const date = new Date(iso);
    if (!iso || Number.isNaN(date.getTime())) return h("span", { text: iso || "unknown time" });
    const seconds = Math.round((date.getTime() - Date.now()) / 1000);
    const units = [["year", 31536000], ["month", 2592000], ["week", 604800], ["day", 86400], ["hour", 3600], ["minute", 60]];
    let relative = relativeFormat.format(seconds, "second");
    if (Math.abs(seconds) < 45) relative = "just now";
    for (const [unit, size] of units) {
      if (Math.abs(seconds) >= size) { relative = relativeFormat.format(Math.round(seconds / size), unit); break; }
    }
    return h("time", { datetime: iso, title: date.toISOString() }, `${prefix || ""}${dateFormat.format(date)} (${relative})`);
  }

  function weight(value) {
    const n = Number(value);
    return Number.isFinite(n) ? `×${Math.round(n * 100) / 100}` : "×?";
  }

  // Named levels depend on the stack's configuration, so the level is read from the side of 1.0.
  function importanceLevel(value) {
    const n = Number(value);
    if (!Number.isFinite(n) || Math.abs(n - 1) < 1e-9) return "neutral";
    return n > 1 ? "important" : "unimportant";
  }

  const LEVEL_LABEL = { important: "Important", neutral: "Neutral", unimportant: "Unimportant" };

  function ratingBadge(rating) {
    const up = rating === "up";
    return h("span", { class: `badge ${up ? "badge-up" : "badge-down"}` },
      h("span", { "aria-hidden": "true" }, up ? "👍" : "👎"), up ? "Thumbs up" : "Thumbs down");
  }

  // ---- lessons -----------------------------------------------------------------------------------

  const state = { agents: [], pending: new Map(), loadedOnce: false };

  function agentState(agentId) { return state.agents.find((a) => a.agentId === agentId); }

  async function loadAgents() {
    agentsBox.setAttribute("aria-busy", "true");
    clearAlert();
    let listed;
    try {
      listed = (await api("GET", "/v1/agents")).items || [];
    } catch (err) {
      agentsBox.setAttribute("aria-busy", "false");
      agentsBox.replaceChildren(h("p", { class: "empty", text: "Lessons could not be loaded." }));
      showAlert(`Could not list agents: ${describe(err)}`);
      return;
    }
    state.agents = listed.map((a) => ({ agentId: a.agentId, memory: a.memory, items: [], nextCursor: null, error: null }));
    fillAgentFilter();
    await Promise.all(state.agents.map((a) => loadPage(a, null)));
    state.loadedOnce = true;
    agentsBox.setAttribute("aria-busy", "false");
    renderAgents();
  }

  async function loadPage(agent, cursor) {
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (cursor) query.set("cursor", cursor);
    try {
      const page = await api("GET", `/v1/agents/${segment(agent.agentId)}/memories?${query}`);
      // Keyed by memoryId: a page that overlaps what is shown (a refresh racing a "Load more") adds nothing twice.
      const shown = new Set(agent.items.map((m) => m.memoryId));
      agent.items = agent.items.concat((page.items || []).filter((m) => !shown.has(m.memoryId)));
      agent.nextCursor = page.nextCursor || null;
      agent.error = null;
    } catch (err) {
      agent.error = describe(err);
    }
  }

  function fillAgentFilter() {
    const select = byId("agent-filter");
    const chosen = select.value;
    fill(select, h("option", { value: "" }, "All agents"),
      state.agents.map((a) => h("option", { value: a.agentId }, a.agentId)));
    select.value = state.agents.some((a) => a.agentId === chosen) ? chosen : "";
  }

  function renderAgents() {
    if (!state.agents.length) {
      agentsBox.replaceChildren(h("div", { class: "empty" },
        h("p", { text: "No agents yet." }),
        h("p", { class: "hint", text: "An agent appears here once memory is enabled for it (enabledAgents) or once it holds lessons." })));
      applyFilters();
      return;
    }
    fill(agentsBox, state.agents.map(renderAgent), h("p", { class: "empty", id: "no-match", hidden: true }));
    applyFilters();
  }

  function renderAgent(agent) {
    const headingId = `agent-${agent.agentId}`;
    const list = h("ul", { class: "lessons" }, groupsOf(agent.items).map((entry) => (entry.groupId
      ? renderGroup(agent, entry) : lessonLi(entry.members[0]))));
    const section = h("section", { class: "agent", "aria-labelledby": headingId, "data-agent-id": agent.agentId },
      h("div", { class: "agent-head" },
        h("h2", { id: headingId }, agent.agentId),
        h("span", { class: `badge ${agent.memory === "enabled" ? "badge-enabled" : "badge-disabled"}` },
          agent.memory === "enabled" ? "Memory on" : "Memory off"),
        h("span", { class: "agent-count" })),
      agent.error ? h("p", { class: "notice notice-error", text: `Lessons could not be loaded: ${agent.error}` }) : null,
      !agent.error && !agent.items.length ? h("p", { class: "empty", text: "No lessons yet." }) : null,
      list,
      h("p", { class: "empty agent-no-match", hidden: true, text: "No lesson of this agent matches the filters." }),
      agent.nextCursor ? h("div", { class: "more" },
        h("button", { type: "button", class: "btn", onclick: (e) => loadMore(agent, e.currentTarget) },
          "Load more lessons", h("span", { class: "sr-only" }, ` of ${agent.agentId}`))) : null);
    return section;
  }

  function lessonLi(m) { return h("li", { "data-memory-id": m.memoryId }, renderLesson(m)); }

  // Lessons that agree are one card: the server names each lesson's group (`group` of GET .../memories),
  // by the rule retrieve injects one bullet by. Members stay in list order (newest first).
  function groupsOf(items) {
    const entries = [];
    const byGroup = new Map();
    for (const m of items) {
      const group = m.group;
      if (!group || group.size < 2) { entries.push({ groupId: null, members: [m] }); continue; }
      let entry = byGroup.get(group.groupId);
      if (!entry) {
        entry = { groupId: group.groupId, members: [] };
        byGroup.set(group.groupId, entry);
        entries.push(entry);
      }
      entry.members.push(m);
    }
    return entries;
  }

  // How many editors a group stands for now: the server's count, less the deletions still in their undo window.
  function groupSize(agent, groupId) {
    const members = agent.items.filter((m) => m.group && m.group.groupId === groupId);
    const size = members.length ? Math.max(...members.map((m) => m.group.size)) : 0;
    return size - members.filter((m) => state.pending.has(m.memoryId)).length;
  }

  function editorsSaid(size) { return `${size} ${size === 1 ? "editor" : "editors"} said this`; }

  function renderGroup(agent, entry) {
    const first = entry.members[0];
    const titleId = `group-${entry.groupId}`;
    const membersId = `${titleId}-members`;
    const members = h("ul", { class: "lessons group-members", id: membersId, hidden: true }, entry.members.map(lessonLi));
    const toggleText = h("span", null, `Show the ${entry.members.length} lessons`);
    const toggle = h("button", {
      type: "button", class: "btn btn-small", "aria-expanded": "false", "aria-controls": membersId,
      "data-action": "expand-group", onclick: () => expandGroup(li, toggle.getAttribute("aria-expanded") !== "true"),
    }, toggleText, h("span", { class: "sr-only" }, ` of the group “${(first.comment || first.memoryId).slice(0, 60)}”`));
    const size = groupSize(agent, entry.groupId);
    const li = h("li", { class: "group-card", "data-group-id": entry.groupId },
      h("article", { class: `lesson lesson-group lesson-${first.rating === "up" ? "up" : "down"}`, "aria-labelledby": titleId },
        h("div", { class: "lesson-top" },
          h("h3", { class: "group-title", id: titleId }, h("span", { class: "group-count" }, editorsSaid(size))),
          ratingBadge(first.rating)),
        first.comment
          ? h("blockquote", { class: "comment" }, first.comment)
          : h("p", { class: "comment comment-none", text: "No comment from the editor." }),
        h("p", { class: "hint group-hint" },
          "Near-identical lessons: injected as one bullet that says how many editors gave it.",
          entry.members.length < size ? ` ${entry.members.length} of them loaded; Load more for the rest.` : ""),
        h("div", null, toggle),
        members));
    return li;
  }

  function expandGroup(card, open) {
    const toggle = card.querySelector("[data-action='expand-group']");
    card.querySelector(".group-members").hidden = !open;
    toggle.setAttribute("aria-expanded", String(open));
    const count = card.querySelectorAll(".group-members > li[data-memory-id]").length;
    toggle.firstChild.textContent = open ? "Hide the lessons" : `Show the ${count} lessons`;
  }

  // 👍 and 👎 on near-identical text: said in words (and a badge), each side linking to the other.
  function conflictNote(m) {
    const group = m.group;
    if (!group || !group.conflictsWith || !group.conflictsWith.length) return null;
    const others = group.conflictsWith.map((id) => lessonLink(m.agentId, id));
    return h("p", { class: "conflict-note" },
      h("span", { class: "badge badge-conflict" }, h("span", { "aria-hidden": "true" }, "⚠"), "Conflict"),
      group.overruledBy
        ? ["A newer lesson says the opposite on near-identical text, so this one is not injected: ",
           lessonLink(m.agentId, group.overruledBy)]
        : ["An older lesson says the opposite on near-identical text; this newer one is injected instead of it: ",
           ...others.flatMap((a, i) => (i ? [", ", a] : [a]))]);
  }

  function renderLesson(m) {
    const level = importanceLevel(m.importance);
    const headingId = `lesson-${m.memoryId}`;
    const digest = m.digest || "";
    const long = digest.length > SNIPPET_CHARS;
    const digestText = h("p", { class: "digest-text" }, long ? `${digest.slice(0, SNIPPET_CHARS).trimEnd()}…` : digest);
    const runHref = `#run/${segment(m.agentId)}/${segment(m.runId)}`;
    const article = h("article", { class: `lesson lesson-${m.rating === "up" ? "up" : "down"}`, "aria-labelledby": headingId },
      h("div", { class: "lesson-top" },
        h("h3", { class: "sr-only", id: headingId },
          `${m.rating === "up" ? "Thumbs-up" : "Thumbs-down"} lesson: ${(m.comment || m.memoryId).slice(0, 80)}`),
        ratingBadge(m.rating),
        h("span", { class: `badge badge-${level}`, title: "Multiplies the lesson's similarity into its score" },
          `${LEVEL_LABEL[level]} ${weight(m.importance)}`),
        timeElement(m.createdAt, "")),
      m.comment
        ? h("blockquote", { class: "comment", cite: runHref }, m.comment)
        : h("p", { class: "comment comment-none", text: "No comment from the editor." }),
      conflictNote(m),
      digest ? h("div", { class: "digest" },
        h("div", { class: "digest-label", id: `${headingId}-digest` }, "Digest"),
        digestText,
        long ? h("button", {
          type: "button", class: "btn btn-link btn-small", "aria-expanded": "false",
          onclick: (e) => {
            const open = e.currentTarget.getAttribute("aria-expanded") === "true";
            digestText.textContent = open ? `${digest.slice(0, SNIPPET_CHARS).trimEnd()}…` : digest;
            e.currentTarget.setAttribute("aria-expanded", String(!open));
            e.currentTarget.textContent = open ? "Show full digest" : "Show less";
          },
        }, "Show full digest") : null) : null,
      h("div", { class: "meta" },
        h("span", null, "Taught by run ", h("a", { href: runHref, class: "mono run-link", "data-agent-id": m.agentId, "data-run-id": m.runId }, m.runId)),
        h("span", null, `Injected into ${m.injectedCount || 0} ${m.injectedCount === 1 ? "run" : "runs"} since`),
        m.status === "pending" ? h("span", { class: "badge badge-unimportant" }, "Being indexed") : null,
        h("span", { class: "mono" }, m.memoryId)),
      h("div", { class: "actions" },
        h("div", { class: "importance", role: "group", "aria-label": "Importance" },
          h("span", { class: "importance-label", "aria-hidden": "true" }, "Importance"),
          h("span", { class: "segmented" },
            ["important", "neutral", "unimportant"].map((name) => h("button", {
              type: "button", class: "btn btn-small", "aria-pressed": String(level === name), "data-importance": name,
              onclick: () => setImportance(m, name),
            }, LEVEL_LABEL[name])))),
        h("button", { type: "button", class: "btn btn-danger btn-small", "data-action": "delete", onclick: () => deleteLesson(m) },
          "Delete", h("span", { class: "sr-only" }, " lesson"))));
    return article;
  }

  function lessonItem(memoryId) {
    return Array.from(agentsBox.querySelectorAll("li[data-memory-id]")).find((li) => li.dataset.memoryId === memoryId) || null;
  }

  async function loadMore(agent, button) {
    button.disabled = true;
    button.textContent = "Loading…";
    const before = agent.items.length;
    await loadPage(agent, agent.nextCursor);
    const section = renderAgent(agent);
    const old = Array.from(agentsBox.querySelectorAll("section.agent")).find((s) => s.dataset.agentId === agent.agentId);
    old.replaceWith(section);
    applyFilters();
    const first = section.querySelectorAll("li[data-memory-id]")[before];
    // A new lesson inside a folded group: its group's card takes the focus.
    const holder = first && first.closest(".group-members[hidden]") ? first.closest("li.group-card") : first;
    const target = holder ? holder.querySelector("a, button") : section.querySelector("h2");
    if (target) target.focus();
    announce(agent.error ? `More lessons could not be loaded: ${agent.error}` : `Loaded ${agent.items.length - before} more lessons of ${agent.agentId}.`);
  }

  async function setImportance(memory, name) {
    const li = lessonItem(memory.memoryId);
    const buttons = li ? li.querySelectorAll("[data-importance]") : [];
    buttons.forEach((b) => { b.disabled = true; });
    try {
      const updated = await api("PATCH", `/v1/agents/${segment(memory.agentId)}/memories/${segment(memory.memoryId)}`,
        { body: { importance: name } });
      const agent = agentState(memory.agentId);
      const index = agent.items.findIndex((m) => m.memoryId === memory.memoryId);
      const kept = { ...updated, group: index >= 0 ? agent.items[index].group : memory.group };
      if (index >= 0) agent.items[index] = kept;
      const fresh = lessonItem(memory.memoryId);
      if (fresh) {
        fresh.replaceChildren(renderLesson(kept));
        const again = fresh.querySelector(`[data-importance="${name}"]`);
        if (again) again.focus();
      }
      announce(`Marked ${LEVEL_LABEL[name].toLowerCase()} (importance ${weight(updated.importance)}).`);
    } catch (err) {
      buttons.forEach((b) => { b.disabled = false; });
      showAlert(`Could not change the importance: ${describe(err)}`, err.details);
    }
  }

  // A deleted lesson is hidden at once; the DELETE is sent only when its undo window closes.
  function deleteLesson(memory) {
    const li = lessonItem(memory.memoryId);
    if (!li || state.pending.has(memory.memoryId)) return;
    const next = li.nextElementSibling || li.previousElementSibling;
    li.hidden = true;
    li.dataset.pendingDelete = "true";
    const undo = h("button", { type: "button", class: "btn btn-small" }, "Undo", h("span", { class: "sr-only" }, " delete"));
    const bar = h("div", { class: "toast-bar", "aria-hidden": "true" });
    bar.style.animation = `drain ${UNDO_MS}ms linear forwards`;
    const toast = h("div", { class: "toast", "data-memory-id": memory.memoryId },
      h("span", null, "Lesson deleted."), undo, bar);
    byId("toasts").append(toast);
    const pending = { memory, toast, timer: window.setTimeout(() => commitDelete(memory.memoryId), UNDO_MS) };
    state.pending.set(memory.memoryId, pending);
    undo.addEventListener("click", () => undoDelete(memory.memoryId));
    applyFilters();
    announce(`Lesson deleted. Undo is available for ${UNDO_MS / 1000} seconds.`);
    undo.focus();
    pending.returnFocus = next;
  }

  function undoDelete(memoryId) {
    const pending = state.pending.get(memoryId);
    if (!pending) return;
    window.clearTimeout(pending.timer);
    state.pending.delete(memoryId);
    pending.toast.remove();
    const li = lessonItem(memoryId);
    if (li) {
      li.hidden = false;
      delete li.dataset.pendingDelete;
      applyFilters();
      const del = li.querySelector("[data-action='delete']");
      if (del) del.focus();
    }
    announce("Delete undone: the lesson is back.");
  }

  async function commitDelete(memoryId, keepalive) {
    const pending = state.pending.get(memoryId);
    if (!pending) return;
    state.pending.delete(memoryId);
    const hadFocus = pending.toast.contains(document.activeElement);
    pending.toast.remove();
    const { memory } = pending;
    if (hadFocus) focusAfterDelete(pending.returnFocus, memory.agentId);
    try {
      await api("DELETE", `/v1/agents/${segment(memory.agentId)}/memories/${segment(memory.memoryId)}`, { keepalive });
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) {
        const li = lessonItem(memoryId);
        if (li) { li.hidden = false; delete li.dataset.pendingDelete; applyFilters(); }
        showAlert(`The lesson could not be deleted and is shown again: ${describe(err)}`);
        return;
      }
    }
    const agent = agentState(memory.agentId);
    if (agent) {
      agent.items = agent.items.filter((m) => m.memoryId !== memoryId);
      const groupId = memory.group && memory.group.groupId;
      // Deleting one member leaves the rest of its group: one editor fewer.
      agent.items = agent.items.map((m) => (groupId && m.group && m.group.groupId === groupId
        ? { ...m, group: { ...m.group, size: Math.max(1, m.group.size - 1) } } : m));
    }
    const li = lessonItem(memoryId);
    if (li) li.remove();
    applyFilters();
    announce("Lesson deleted for good.");
  }

  function focusAfterDelete(candidate, agentId) {
    let target = candidate && candidate.isConnected && !candidate.hidden ? candidate.querySelector("a, button") : null;
    if (!target) {
      const section = Array.from(agentsBox.querySelectorAll("section.agent")).find((s) => s.dataset.agentId === agentId);
      target = section ? section.querySelector("li:not([hidden]) a, h2") : byId("text-filter");
      if (target && target.tagName === "H2") target.setAttribute("tabindex", "-1");
    }
    if (target) target.focus();
  }

  // Leaving the page closes every undo window: the deletions the editor asked for still happen.
  window.addEventListener("pagehide", () => {
    for (const [memoryId, pending] of Array.from(state.pending)) {
      window.clearTimeout(pending.timer);
      commitDelete(memoryId, true);
    }
  });

  function matches(memory, needle, rating) {
    if (rating && memory.rating !== rating) return false;
    if (!needle) return true;
    return [memory.comment, memory.digest, memory.runId, memory.memoryId]
      .some((field) => typeof field === "string" && field.toLowerCase().includes(needle));
  }

  function applyFilters() {
    const agentFilter = byId("agent-filter").value;
    const rating = byId("rating-filter").value;
    const needle = byId("text-filter").value.trim().toLowerCase();
    const filtering = Boolean(needle || rating);
    let shown = 0;
    let total = 0;
    for (const section of agentsBox.querySelectorAll("section.agent")) {
      const agent = agentState(section.dataset.agentId);
      const visibleAgent = !agentFilter || agentFilter === section.dataset.agentId;
      let inAgent = 0;
      let live = 0;
      for (const li of section.querySelectorAll("li[data-memory-id]")) {
        if (li.dataset.pendingDelete) continue;
        const memory = agent.items.find((m) => m.memoryId === li.dataset.memoryId);
        live += 1;
        const ok = Boolean(memory) && matches(memory, needle, rating);
        li.hidden = !ok;
        if (ok) inAgent += 1;
      }
      for (const card of section.querySelectorAll("li.group-card")) {
        const members = Array.from(card.querySelectorAll(".group-members > li[data-memory-id]"));
        card.hidden = !members.some((li) => !li.hidden);
        card.querySelector(".group-count").textContent = editorsSaid(groupSize(agent, card.dataset.groupId));
      }
      section.hidden = !visibleAgent || (filtering && inAgent === 0 && !agentFilter);
      section.querySelector(".agent-no-match").hidden = !(filtering && inAgent === 0 && live > 0);
      const more = agent.nextCursor ? "+" : "";
      section.querySelector(".agent-count").textContent = filtering
        ? `${inAgent} of ${live}${more} lessons match`
        : `${live}${more} ${live === 1 && !more ? "lesson" : "lessons"}`;
      if (visibleAgent) { shown += inAgent; total += live; }
    }
    const noMatch = byId("no-match");
    const anyVisible = Array.from(agentsBox.querySelectorAll("section.agent")).some((s) => !s.hidden);
    if (noMatch) {
      noMatch.hidden = anyVisible || !state.agents.length;
      noMatch.textContent = "No lesson matches the filters.";
    }
    if (state.loadedOnce) {
      byId("summary").textContent = filtering
        ? `${shown} of ${total} loaded lessons match`
        : `${total} ${total === 1 ? "lesson" : "lessons"} loaded from ${agentFilter ? 1 : state.agents.length} ${(agentFilter || state.agents.length === 1) ? "agent" : "agents"}`;
    }
  }

  let filterTimer = 0;
  byId("text-filter").addEventListener("input", () => {
    window.clearTimeout(filterTimer);
    filterTimer = window.setTimeout(applyFilters, 120);
  });
  byId("agent-filter").addEventListener("change", applyFilters);
  byId("rating-filter").addEventListener("change", applyFilters);
  byId("filters").addEventListener("submit", (e) => { e.preventDefault(); applyFilters(); });
  byId("refresh").addEventListener("click", async () => {
    for (const memoryId of Array.from(state.pending.keys())) {
      const pending = state.pending.get(memoryId);
      window.clearTimeout(pending.timer);
      await commitDelete(memoryId);
    }
    await loadAgents();
    announce("Lessons refreshed.");
  });

  // ---- the run that taught a lesson ----------------------------------------------------------------

  let runOpener = null;

  async function openRun(agentId, runId) {
    const dialog = byId("run-dialog");
    const body = byId("run-body");
    runOpener = document.activeElement;
    fill(byId("run-title"), "Run ", h("span", { class: "mono run-id" }, runId));
    body.replaceChildren(h("p", { class: "muted", text: "Loading the run…" }));
    if (!dialog.open) dialog.showModal();
    byId("run-close").focus();
    let run;
    try {
      run = await api("GET", `/v1/agents/${segment(agentId)}/runs/${segment(runId)}`);
    } catch (err) {
      body.replaceChildren(h("p", { class: "notice notice-error", role: "alert", text: `The run could not be loaded: ${describe(err)}` }));
      return;
    }
    const details = h("dl", { class: "kv" },
      h("dt", null, "Agent"), h("dd", null, run.agentId),
      h("dt", null, "Recorded"), h("dd", null, timeElement(run.createdAt, "")));
    if (run.userId) {
      details.append(h("dt", null, "User"), h("dd", null,
        h("button", { type: "button", class: "btn btn-link btn-small mono", onclick: () => { closeRun(); showUser(run.userId); } }, run.userId)));
    }
    if (run.threadId) details.append(h("dt", null, "Thread"), h("dd", { class: "mono" }, run.threadId));
    const injected = run.injectedMemoryIds || [];
    const feedback = run.feedback || [];
    fill(body,
      details,
      h("section", null, h("h3", null, "Input"), h("pre", { class: "block" }, run.input || "")),
      h("section", null, h("h3", null, "Output"),
        run.output ? h("pre", { class: "block" }, run.output) : h("p", { class: "muted", text: "No output recorded." })),
      h("section", null, h("h3", null, "Feedback"),
        feedback.length ? h("ul", { class: "plain-list" }, feedback.map((f) => h("li", null,
          ratingBadge(f.rating), " ", f.comment ? h("span", null, f.comment) : h("span", { class: "muted" }, "(no comment)"))))
          : h("p", { class: "muted", text: "No feedback yet." })),
      h("section", null, h("h3", null, "Lessons injected into this run"),
        injected.length ? h("ul", { class: "plain-list mono" }, injected.map((id) => h("li", null, id)))
          : h("p", { class: "muted", text: "None." })));
    announce(`Run ${runId} loaded.`);
  }

  function closeRun() {
    const dialog = byId("run-dialog");
    if (dialog.open) dialog.close();
  }

  byId("run-close").addEventListener("click", closeRun);
  byId("run-dialog").addEventListener("close", () => {
    if (window.location.hash.startsWith("#run/")) history.replaceState(null, "", window.location.pathname + window.location.search);
    if (runOpener && runOpener.isConnected) runOpener.focus();
    runOpener = null;
  });
  byId("run-dialog").addEventListener("click", (e) => { if (e.target === e.currentTarget) closeRun(); });
  agentsBox.addEventListener("click", (e) => {
    const link = e.target.closest("a.run-link");
    if (!link || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    openRun(link.dataset.agentId, link.dataset.runId);
  });

  // ---- tabs ----------------------------------------------------------------------------------------

  const tabs = [byId("tab-lessons"), byId("tab-users"), byId("tab-runs")];

  function selectTab(tab, focus) {
    for (const t of tabs) {
      const selected = t === tab;
      t.setAttribute("aria-selected", String(selected));
      t.tabIndex = selected ? 0 : -1;
      byId(t.getAttribute("aria-controls")).hidden = !selected;
    }
    if (focus) tab.focus();
    if (tab.id === "tab-runs") runsTabShown();
    if (tab.id === "tab-users") userDirectoryShown();
  }

  for (const tab of tabs) {
    tab.addEventListener("click", () => selectTab(tab, false));
    tab.addEventListener("keydown", (e) => {
      const index = tabs.indexOf(tab);
      let next = null;
      if (e.key === "ArrowRight") next = tabs[(index + 1) % tabs.length];
      else if (e.key === "ArrowLeft") next = tabs[(index - 1 + tabs.length) % tabs.length];
      else if (e.key === "Home") next = tabs[0];
      else if (e.key === "End") next = tabs[tabs.length - 1];
      if (next) { e.preventDefault(); selectTab(next, true); }
    });
  }

  // ---- user directory (GET /v1/users: the tenant's users by id, paged, filtered by id prefix) ---------

  const USERS_PAGE = 50;
  const directory = { started: false, prefix: "", items: [], cursor: null, generation: 0 };

  function userDirectoryShown() {
    if (directory.started) return;
    directory.started = true;
    loadUserDirectory(false);
  }

  async function loadUserDirectory(more) {
    const prefix = byId("user-search").value.trim();
    const generation = ++directory.generation;
    const query = new URLSearchParams({ limit: String(USERS_PAGE) });
    if (prefix) query.set("prefix", prefix);
    if (more && directory.cursor) query.set("cursor", directory.cursor);
    byId("user-directory").setAttribute("aria-busy", "true");
    let page;
    try {
      page = await api("GET", `/v1/users?${query}`);
    } catch (err) {
      if (generation !== directory.generation) return;
      byId("user-directory").setAttribute("aria-busy", "false");
      byId("user-directory-summary").textContent = `The users could not be listed: ${describe(err)}`;
      return;
    }
    if (generation !== directory.generation) return;
    directory.prefix = prefix;
    directory.items = (more ? directory.items : []).concat(page.items || []);
    directory.cursor = page.nextCursor || null;
    byId("user-directory").setAttribute("aria-busy", "false");
    renderUserDirectory();
  }

  function renderUserDirectory() {
    fill(byId("user-list"), directory.items.map((u) => h("li", null,
      h("button", { type: "button", class: "btn btn-link btn-small mono", "data-user-id": u.userId,
        "aria-current": String(u.userId === user.id), onclick: () => showUser(u.userId) }, u.userId))));
    const count = `${directory.items.length}${directory.cursor ? "+" : ""}`;
    byId("user-directory-summary").textContent = directory.items.length
      ? `${count} user${directory.items.length === 1 && !directory.cursor ? "" : "s"}${directory.prefix ? ` starting with "${directory.prefix}"` : ""}`
      : (directory.prefix ? `No user id starts with "${directory.prefix}".` : "No user has stored a turn yet.");
    byId("users-more").hidden = !directory.cursor;
  }

  let userSearchTimer = 0;
  byId("user-search").addEventListener("input", () => {
    window.clearTimeout(userSearchTimer);
    userSearchTimer = window.setTimeout(() => loadUserDirectory(false), 200);
  });
  byId("users-more").addEventListener("click", () => loadUserDirectory(true));

  // ---- users ---------------------------------------------------------------------------------------

  const userView = byId("user-view");
  const user = { id: null, profile: null, facts: [], factsCursor: null, editing: false };

  function showUser(userId) {
    selectTab(byId("tab-users"), false);
    byId("user-id").value = userId;
    loadUser(userId);
  }

  byId("user-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const userId = byId("user-id").value.trim();
    if (!ID_PATTERN.test(userId)) {
      userView.replaceChildren(h("p", { class: "notice notice-error", role: "alert",
        text: "A user id is 1-128 letters, digits or . _ : @ - and starts with a letter or digit." }));
      byId("user-id").setAttribute("aria-invalid", "true");
      byId("user-id").focus();
      return;
    }
    byId("user-id").removeAttribute("aria-invalid");
    loadUser(userId);
  });

  async function loadUser(userId) {
    userView.setAttribute("aria-busy", "true");
    userView.replaceChildren(h("p", { class: "muted", text: `Loading ${userId}…` }));
    Object.assign(user, { id: userId, profile: null, facts: [], factsCursor: null, editing: false });
    const [profile, facts] = await Promise.allSettled([
      api("GET", `/v1/users/${segment(userId)}/profile`),
      api("GET", `/v1/users/${segment(userId)}/facts?limit=50`),
    ]);
    if (user.id !== userId) return;
    userView.setAttribute("aria-busy", "false");
    user.profile = profile.status === "fulfilled" ? profile.value : null;
    if (facts.status === "fulfilled") {
      user.facts = facts.value.items || [];
      user.factsCursor = facts.value.nextCursor || null;
    }
    renderUser(profile.status === "rejected" ? describe(profile.reason) : null,
      facts.status === "rejected" ? describe(facts.reason) : null);
    announce(`Showing user ${userId}.`);
    if (directory.started) renderUserDirectory();
  }

  function splitProfile(markdown) {
    const text = markdown || "";
    const front = /^---\n[\s\S]*?\n---\n?/.exec(text);
    return front ? text.slice(front[0].length).replace(/^\n+/, "") : text;
  }

  // Headings, bullets and paragraphs only, built as DOM nodes: the profile is data, not markup.
  function renderMarkdown(markdown) {
    const box = h("div", { class: "profile-doc" });
    let list = null;
    for (const raw of splitProfile(markdown).split("\n")) {
      const line = raw.trimEnd();
      const heading = /^#{1,6}\s+(.*)$/.exec(line);
      const bullet = /^\s*[-*]\s+(.*)$/.exec(line);
      if (heading) { list = null; box.append(h("h3", null, heading[1])); }
      else if (bullet) {
        if (!list) { list = h("ul"); box.append(list); }
        list.append(h("li", null, bullet[1]));
      } else if (line.trim() === "_(empty)_") { list = null; box.append(h("p", { class: "muted" }, "Nothing yet.")); }
      else if (line.trim()) { list = null; box.append(h("p", null, line)); }
      else list = null;
    }
    return box;
  }

  function renderUser(profileError, factsError) {
    const profileCard = h("section", { class: "card", "aria-labelledby": "profile-heading", id: "profile-card" });
    const factsCard = h("section", { class: "card", "aria-labelledby": "facts-heading", id: "facts-card" });
    fillProfileCard(profileCard, profileError);
    fillFactsCard(factsCard, factsError);
    userView.replaceChildren(h("div", { class: "cards" }, profileCard, factsCard));
  }

  function fillProfileCard(card, error) {
    const p = user.profile;
    const head = h("div", { class: "card-head" }, h("h2", { id: "profile-heading" }, "Profile"));
    if (error) {
      card.replaceChildren(head, h("p", { class: "notice notice-error", text: `The profile could not be loaded: ${error}` }));
      return;
    }
    const none = !p || !p.version;
    head.append(h("button", { type: "button", class: "btn btn-small", id: "edit-profile", onclick: () => startEdit(card) },
      none ? "Create profile" : "Edit"));
    const meta = h("div", { class: "meta" },
      h("span", null, none ? "No profile yet" : `Version ${p.version}`),
      p && p.updatedAt ? h("span", null, "Updated ", timeElement(p.updatedAt, "")) : null,
      p && p.turnCount != null ? h("span", null, `${p.turnCount} turns read`) : null,
      p && p.source ? h("span", null, `Last change: ${p.source}`) : null);
    fill(card, head, meta,
      none ? h("p", { class: "muted", text: "Nothing is known about this user yet. A profile is written after their conversations are consolidated." })
        : renderMarkdown(p.markdown));
  }

  function startEdit(card, draft, notice) {
    const p = user.profile || { version: 0, markdown: "" };
    user.editing = true;
    const area = h("textarea", { id: "profile-editor", "aria-describedby": "profile-editor-hint", spellcheck: "true" });
    area.value = draft !== undefined ? draft : splitProfile(p.markdown);
    const save = h("button", { type: "submit", class: "btn btn-primary" }, "Save profile");
    const cancel = h("button", { type: "button", class: "btn", onclick: () => { user.editing = false; fillProfileCard(card); byId("edit-profile").focus(); } }, "Cancel");
    const problem = h("div", { id: "profile-problem" });
    if (notice) problem.append(notice);
    const form = h("form", { class: "editor", "aria-label": "Edit profile" },
      h("div", { class: "field" },
        h("label", { for: "profile-editor" }, `Profile of ${user.id} (Markdown)`),
        area,
        h("p", { class: "hint", id: "profile-editor-hint" },
          `Keep the six sections (Identity, Communication Preferences, Work Context, Skills & Expertise, Recent Topics, Follow-ups). Saving replaces version ${p.version}.`)),
      problem,
      h("div", { class: "form-actions" }, cancel, save));
    form.addEventListener("submit", (e) => { e.preventDefault(); saveProfile(card, area, save, problem, p.version); });
    card.replaceChildren(h("div", { class: "card-head" }, h("h2", { id: "profile-heading" }, "Edit profile")), form);
    area.focus();
    area.setSelectionRange(0, 0);
    area.scrollTop = 0;
  }

  async function saveProfile(card, area, save, problem, version) {
    save.disabled = true;
    problem.replaceChildren();
    try {
      user.profile = await api("PUT", `/v1/users/${segment(user.id)}/profile`,
        { body: { markdown: area.value }, headers: { "If-Match": `"${version}"` } });
      user.editing = false;
      fillProfileCard(card);
      byId("edit-profile").focus();
      announce(`Profile saved as version ${user.profile.version}.`);
    } catch (err) {
      save.disabled = false;
      if (err.status === 409) {
        let latest = null;
        try { latest = await api("GET", `/v1/users/${segment(user.id)}/profile`); } catch (_) { /* the notice says so */ }
        problem.replaceChildren(conflictNotice(card, area, version, latest));
      } else {
        problem.replaceChildren(h("div", { class: "notice notice-error", role: "alert" },
          h("p", { text: `Not saved: ${describe(err)}` }),
          err.details && err.details.length ? h("ul", { class: "plain-list" }, err.details.map((d) => h("li", null, d.message || String(d)))) : null));
      }
    }
  }

  // 409: someone else saved first. Nothing is lost: the draft stays, the newer version can be read,
  // and the operator chooses to drop the draft or to save it over the newer version knowingly.
  function conflictNotice(card, area, version, latest) {
    const notice = h("div", { class: "notice notice-error", role: "alert" },
      h("p", null, h("strong", null, "Conflict (409): not saved. "),
        latest
          ? h("span", null, `You were editing version ${version}, but version ${latest.version} was saved since`,
            latest.source ? ` (by ${latest.source === "user" ? "an edit" : latest.source})` : "", ".")
          : `You were editing version ${version}, but a newer version was saved since.`),
      h("p", null, "Your text is still in the box."));
    if (!latest) return notice;
    notice.append(
      h("details", { class: "latest" },
        h("summary", null, `Read version ${latest.version}`),
        h("pre", { class: "block" }, splitProfile(latest.markdown))),
      h("div", { class: "form-actions form-actions-start" },
        h("button", { type: "button", class: "btn btn-small", onclick: () => {
          user.profile = latest;
          user.editing = false;
          fillProfileCard(card);
          byId("edit-profile").focus();
          announce(`Your edit was discarded; showing version ${latest.version}.`);
        } }, `Discard my edit, show version ${latest.version}`),
        h("button", { type: "button", class: "btn btn-small", onclick: () => {
          user.profile = latest;
          startEdit(card, area.value, h("p", { class: "notice notice-info", text: `Your text now replaces version ${latest.version} when you save.` }));
          announce(`Editing over version ${latest.version} with your text.`);
        } }, `Keep my text over version ${latest.version}`)));
    return notice;
  }

  function fillFactsCard(card, error) {
    const head = h("div", { class: "card-head" }, h("h2", { id: "facts-heading" }, "Facts"),
      h("span", { class: "agent-count" }, error ? "" : `${user.facts.length}${user.factsCursor ? "+" : ""}`));
    if (error) {
      card.replaceChildren(head, h("p", { class: "notice notice-error", text: `Facts could not be loaded: ${error}` }));
      return;
    }
    const list = user.facts.length
      ? h("ul", { class: "facts" }, user.facts.map((f) => h("li", { class: "fact" },
        h("p", null, f.text),
        h("div", { class: "meta" },
          f.subject ? h("span", null, f.subject) : null,
          f.validFrom ? h("span", null, "Since ", timeElement(f.validFrom, "")) : null,
          f.status && f.status !== "active" ? h("span", null, f.status) : null))))
      : h("p", { class: "muted", text: "No facts about this user." });
    fill(card, head, list, user.factsCursor ? h("div", { class: "more" },
      h("button", { type: "button", class: "btn btn-small", onclick: async (e) => {
        e.currentTarget.disabled = true;
        const before = user.facts.length;
        try {
          const page = await api("GET", `/v1/users/${segment(user.id)}/facts?${new URLSearchParams({ limit: "50", cursor: user.factsCursor })}`);
          user.facts = user.facts.concat(page.items || []);
          user.factsCursor = page.nextCursor || null;
          fillFactsCard(card);
          const item = card.querySelectorAll("li.fact")[before];
          if (item) { item.tabIndex = -1; item.focus(); }
        } catch (err) { showAlert(`Could not load more facts: ${describe(err)}`); }
      } }, "Load more facts")) : null);
  }

  // ---- runs: the editors' review queue ---------------------------------------------------------------
  // Verdicts are given through the embeddable widget (<agentmem-feedback>, /static/agentmem-feedback.v1.js):
  // one implementation of sending feedback once (Idempotency-Key) and following its lesson until indexed.

  const RUNS_PAGE = 20;
  const RUN_FILTER_TEXT = { none: "awaiting a verdict", down: "with a 👎 verdict", up: "with a 👍 verdict", any: "" };
  const runs = { started: false, agent: null, verdict: "none", items: [], cursor: null, open: null, opener: null, generation: 0 };
  const runsList = byId("runs-list");
  const runView = byId("run-view");
  const runViewBody = byId("run-view-body");

  function runsTabShown() {
    if (runs.started) return;
    runs.started = true;
    loadRunAgents();
  }

  async function loadRunAgents() {
    let listed;
    try {
      listed = (await api("GET", "/v1/agents")).items || [];
    } catch (err) {
      runs.started = false;
      showAlert(`Could not list agents: ${describe(err)}`);
      return;
    }
    const select = byId("run-agent");
    const chosen = select.value;
    fill(select, listed.map((a) => h("option", { value: a.agentId }, a.memory === "enabled" ? a.agentId : `${a.agentId} (memory off)`)));
    const pick = listed.find((a) => a.agentId === chosen) || listed.find((a) => a.memory === "enabled") || listed[0];
    if (!pick) {
      byId("runs-summary").textContent = "No agent yet: an agent appears once memory is enabled for it.";
      byId("runs-box").setAttribute("aria-busy", "false");
      return;
    }
    select.value = pick.agentId;
    await loadRuns(false);
  }

  async function loadRuns(more) {
    const agent = byId("run-agent").value;
    const verdict = byId("run-verdict").value;
    if (!agent) return;
    const generation = ++runs.generation;  // the newest request wins over an older, slower answer
    const query = new URLSearchParams({ limit: String(RUNS_PAGE), feedback: verdict });
    if (more && runs.cursor) query.set("cursor", runs.cursor);
    const box = byId("runs-box");
    box.setAttribute("aria-busy", "true");
    let page;
    try {
      page = await api("GET", `/v1/agents/${segment(agent)}/runs?${query}`);
    } catch (err) {
      if (generation !== runs.generation) return;
      box.setAttribute("aria-busy", "false");
      showAlert(`Could not load the runs of ${agent}: ${describe(err)}`);
      return;
    }
    if (generation !== runs.generation) return;
    box.setAttribute("aria-busy", "false");
    const before = more ? runs.items.length : 0;
    const shown = new Set(more ? runs.items.map((r) => r.runId) : []);
    runs.agent = agent;
    runs.verdict = verdict;
    runs.items = (more ? runs.items : []).concat((page.items || []).filter((r) => !shown.has(r.runId)));
    runs.cursor = page.nextCursor || null;
    renderRuns();
    if (more) {
      const next = runsList.querySelectorAll("li[data-run-id] [data-action=review]")[before];
      if (next) next.focus();
    }
  }

  function runMatches(run, needle) {
    if (!needle) return true;
    return [run.input, run.output, run.userId, run.runId]
      .some((field) => typeof field === "string" && field.toLowerCase().includes(needle));
  }

  function renderRuns() {
    const needle = byId("run-text").value.trim().toLowerCase();
    const shown = runs.items.filter((run) => runMatches(run, needle));
    fill(runsList, shown.map(renderRunCard));
    byId("runs-more").hidden = !runs.cursor;
    const loaded = `${runs.items.length}${runs.cursor ? "+" : ""}`;
    const what = RUN_FILTER_TEXT[runs.verdict] || "";
    let summary;
    if (!runs.items.length) {
      summary = runs.verdict === "none" ? `No run of ${runs.agent} awaits a verdict.` : `No run of ${runs.agent} ${what}`.trim() + ".";
    } else if (needle) {
      summary = `${shown.length} of ${loaded} loaded runs match`;
    } else {
      summary = `${loaded} ${runs.items.length === 1 && !runs.cursor ? "run" : "runs"} of ${runs.agent} ${what}`.trim();
    }
    byId("runs-summary").textContent = summary;
    byId("runs-no-match").hidden = !(needle && runs.items.length && !shown.length);
  }

  function verdictBadge(verdict) {
    return verdict ? ratingBadge(verdict) : h("span", { class: "badge badge-awaiting" }, "Awaiting verdict");
  }

  function snippetLine(label, text, cut) {
    return h("p", { class: "run-snippet" }, h("span", { class: "run-snippet-label" }, `${label}: `), text, cut ? " (cut)" : null);
  }

  function renderRunCard(run) {
    const injected = run.injectedMemoryIds || [];
    const current = Boolean(runs.open && runs.open.runId === run.runId);
    return h("li", { class: "run-card", "data-run-id": run.runId, "aria-current": current ? "true" : null },
      h("div", { class: "run-card-top" },
        verdictBadge(run.verdict),
        timeElement(run.createdAt, ""),
        run.userId ? h("span", null, "User ", h("span", { class: "mono" }, run.userId)) : null,
        injected.length ? h("span", null, `${injected.length} ${injected.length === 1 ? "lesson" : "lessons"} injected`) : null),
      snippetLine("Input", run.input || "", run.inputTruncated),
      run.output === null || run.output === undefined
        ? h("p", { class: "run-snippet muted", text: "No output recorded." })
        : snippetLine("Output", run.output, run.outputTruncated),
      h("div", null, h("button", {
        type: "button", class: "btn btn-small", "data-action": "review", "aria-label": `Review run ${run.runId}`,
        "aria-controls": "run-view", onclick: () => openRunView(run.runId),
      }, "Review")));
  }

  function markCurrentRun() {
    for (const li of runsList.querySelectorAll("li[data-run-id]")) {
      if (runs.open && li.dataset.runId === runs.open.runId) li.setAttribute("aria-current", "true");
      else li.removeAttribute("aria-current");
    }
  }

  function lessonLabel(agentId, memoryId) {
    const agent = agentState(agentId);
    const lesson = agent ? agent.items.find((m) => m.memoryId === memoryId) : null;
    if (!lesson) return memoryId;
    const text = lesson.comment || lesson.digest || memoryId;
    return `${lesson.rating === "up" ? "👍" : "👎"} ${text.length > 120 ? `${text.slice(0, 120).trimEnd()}…` : text}`;
  }

  function lessonLink(agentId, memoryId, text) {
    return h("a", {
      href: `#lesson-${memoryId}`, class: "lesson-link", "data-memory-id": memoryId,
      onclick: (e) => { e.preventDefault(); showLesson(agentId, memoryId); },
    }, text || lessonLabel(agentId, memoryId));
  }

  // A lesson's card on the Lessons tab: shown unfiltered, scrolled to and focused.
  function showLesson(agentId, memoryId) {
    selectTab(byId("tab-lessons"), false);
    const agentFilter = byId("agent-filter");
    agentFilter.value = Array.from(agentFilter.options).some((o) => o.value === agentId) ? agentId : "";
    byId("rating-filter").value = "";
    byId("text-filter").value = "";
    applyFilters();
    const card = lessonItem(memoryId);
    if (!card) {
      announce(`That lesson is not among the loaded lessons of ${agentId}: it was deleted, or it is on a later page (Load more).`);
      byId("tab-lessons").focus();
      return;
    }
    const group = card.closest("li.group-card");
    if (group) expandGroup(group, true);
    card.tabIndex = -1;
    card.scrollIntoView({ block: "center" });
    card.focus();
    card.classList.add("lesson-flash");
    window.setTimeout(() => card.classList.remove("lesson-flash"), 2500);
  }

  async function openRunView(runId) {
    const agentId = runs.agent;
    if (!runView.contains(document.activeElement)) runs.opener = document.activeElement;
    runs.open = { agentId, runId };
    markCurrentRun();
    byId("runs-layout").classList.remove("no-view");
    runView.hidden = false;
    const title = byId("run-view-title");
    fill(title, "Run ", h("span", { class: "mono" }, runId));
    runViewBody.replaceChildren(h("p", { class: "muted", text: "Loading the run…" }));
    title.focus();
    title.scrollIntoView({ block: "nearest" });
    let run;
    try {
      run = await api("GET", `/v1/agents/${segment(agentId)}/runs/${segment(runId)}`);
    } catch (err) {
      if (runs.open && runs.open.runId === runId) {
        runViewBody.replaceChildren(h("p", { class: "notice notice-error", role: "alert", text: `The run could not be loaded: ${describe(err)}` }));
      }
      return;
    }
    if (!runs.open || runs.open.runId !== runId) return;
    const details = h("dl", { class: "kv" },
      h("dt", null, "Agent"), h("dd", null, run.agentId),
      h("dt", null, "Recorded"), h("dd", null, timeElement(run.createdAt, "")),
      h("dt", null, "Verdict"), h("dd", { id: "run-view-verdict" }, verdictBadge(run.verdict)));
    if (run.userId) {
      details.append(h("dt", null, "User"), h("dd", null,
        h("button", { type: "button", class: "btn btn-link btn-small mono", onclick: () => showUser(run.userId) }, run.userId)));
    }
    const injected = run.injectedMemoryIds || [];
    const feedback = run.feedback || [];
    const note = h("p", { class: "hint", "aria-live": "polite" });
    const widget = h("agentmem-feedback", { "agent-id": agentId, "run-id": runId, endpoint: "" });
    widget.headers = memoryToken ? { Authorization: `Bearer ${memoryToken}` } : {};
    widget.addEventListener("agentmem-feedback-sent", (e) => runJudged(agentId, runId, e.detail));
    widget.addEventListener("agentmem-feedback-indexed", (e) => lessonIndexed(agentId, e.detail.memoryId, note));
    widget.addEventListener("agentmem-feedback-error", async (e) => {
      if (e.detail.status === 403 && e.detail.code === "forbidden" && await askToken(Boolean(memoryToken))) {
        widget.headers = { Authorization: `Bearer ${memoryToken}` };
        announce("Token set. Send the feedback again.");
      }
    });
    fill(runViewBody,
      details,
      h("section", null, h("h3", null, "Input"), h("pre", { class: "block" }, run.input || "")),
      h("section", null, h("h3", null, "Output"),
        run.output ? h("pre", { class: "block" }, run.output) : h("p", { class: "muted", text: "No output recorded." })),
      h("section", null, h("h3", null, "Lessons injected into this run"),
        injected.length
          ? h("ul", { class: "plain-list injected" }, injected.map((id) => h("li", null, lessonLink(agentId, id))))
          : h("p", { class: "muted", text: "None: no lesson was similar enough, or memory was off." })),
      h("section", { id: "run-view-feedback" }, ...feedbackSoFar(agentId, feedback)),
      widget,
      note);
  }

  function closeRunView() {
    runs.open = null;
    runView.hidden = true;
    runViewBody.replaceChildren();
    byId("runs-layout").classList.add("no-view");
    markCurrentRun();
    if (runs.opener && runs.opener.isConnected) runs.opener.focus();
    else byId("run-agent").focus();
    runs.opener = null;
  }

  // The verdict moved the run: out of the "awaiting" queue (or any filter its new verdict is not).
  function runJudged(agentId, runId, detail) {
    if (agentId !== runs.agent) return;
    const run = runs.items.find((r) => r.runId === runId) || { runId };
    run.verdict = detail.rating;
    const shownVerdict = byId("run-view-verdict");
    if (shownVerdict && runs.open && runs.open.runId === runId) fill(shownVerdict, verdictBadge(detail.rating));
    const stays = runs.verdict === "any" || runs.verdict === detail.rating;
    if (!stays) runs.items = runs.items.filter((r) => r.runId !== runId);
    renderRuns();
    markCurrentRun();
    if (!stays) byId("runs-summary").textContent += `. Run ${runId} left this list.`;
    refreshRunFeedback(agentId, runId);
  }

  // ---- a run's "Feedback so far" (built once, read again after a verdict) --------------------------

  function feedbackSoFar(agentId, feedback) {
    return [h("h3", null, "Feedback so far"),
      feedback.length
        ? h("ul", { class: "plain-list" }, feedback.map((f) => h("li", null, ratingBadge(f.rating), " ",
          f.comment ? h("span", null, f.comment) : h("span", { class: "muted" }, "(no comment)"), " ",
          f.memoryId ? lessonLink(agentId, f.memoryId, "its lesson") : null)))
        : h("p", { class: "muted", text: "None yet: this run awaits a verdict." })];
  }

  // The verdict just sent is part of the run now: show the run's feedback as the API has it.
  async function refreshRunFeedback(agentId, runId) {
    let run;
    try {
      run = await api("GET", `/v1/agents/${segment(agentId)}/runs/${segment(runId)}`);
    } catch (_) {
      return;  // the widget already says the verdict is recorded; the list catches up on the next open
    }
    const section = byId("run-view-feedback");
    if (!section || !runs.open || runs.open.runId !== runId || runs.open.agentId !== agentId) return;
    fill(section, ...feedbackSoFar(agentId, run.feedback || []));
  }

  // The lesson is retrievable: reload the Lessons tab so its card is there, and point to it.
  async function lessonIndexed(agentId, memoryId, note) {
    if (state.pending.size) {
      fill(note, "The lesson is indexed. Refresh the Lessons tab to see it (a deletion's undo window is open there).");
      return;
    }
    await loadAgents();
    fill(note, "The lesson is indexed and on the Lessons tab: ", lessonLink(agentId, memoryId, "see the lesson"), ".");
  }

  byId("run-agent").addEventListener("change", () => { if (runs.open) closeRunView(); loadRuns(false); });
  byId("run-verdict").addEventListener("change", () => loadRuns(false));
  let runFilterTimer = 0;
  byId("run-text").addEventListener("input", () => {
    window.clearTimeout(runFilterTimer);
    runFilterTimer = window.setTimeout(renderRuns, 120);
  });
  byId("run-filters").addEventListener("submit", (e) => { e.preventDefault(); renderRuns(); });
  byId("runs-refresh").addEventListener("click", async () => { await loadRuns(false); announce("Runs refreshed."); });
  byId("runs-more").addEventListener("click", () => loadRuns(true));
  byId("run-view-close").addEventListener("click", closeRunView);
  runView.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && !e.defaultPrevented) { e.preventDefault(); closeRunView(); }
  });

  // ---- start ---------------------------------------------------------------------------------------

  byId("forget-token").addEventListener("click", () => { storeToken(null); announce("Token forgotten for this tab."); });
  byId("conn-host").textContent = window.location.host;

  // `agentmem wall` prints a link carrying its token in the fragment (never sent to a server): keep it, drop it from the URL.
  const fragment = new URLSearchParams(window.location.hash.slice(1));
  if (fragment.get("token")) {
    storeToken(fragment.get("token"));
    history.replaceState(null, "", window.location.pathname + window.location.search);
  } else {
    storeToken(memoryToken);
  }
  loadAgents().then(() => {
    const deepLink = /^#run\/([^/]+)\/([^/]+)$/.exec(window.location.hash);
    if (deepLink) openRun(decodeURIComponent(deepLink[1]), decodeURIComponent(deepLink[2]));
  });
})();
