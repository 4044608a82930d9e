// The referee station page: state from /api/state and /ws, the clock key, the referee's overrides.
// Plain JavaScript, no build step and nothing fetched from outside the station.
"use strict";

(() => {
  // The station writes its page token into the page; it goes back in a header with every action (never in a URL,
  // so never in a log or the history). Another site's page cannot read it.
  const tokenMeta = document.querySelector('meta[name="station-token"]');
  let token = tokenMeta ? tokenMeta.content : "";
  const $ = (id) => document.getElementById(id);
  const body = document.body;
  const CLOCK_DEBOUNCE_MS = 500;

  let status = null;
  let statusAt = 0;
  let lastRevertSeq = 0;
  let lastClock = -Infinity;
  let soundOn = true;
  let frameUrl = null;
  let frameTag = null;
  let reviewing = false;
  let dropped = false;
  const sound = new Audio("revert.wav");

  // -- small helpers -------------------------------------------------------------------------------------
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key.startsWith("data-")) node.setAttribute(key, value);
      else node[key] = value;
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function clockText(seconds) {
    const s = Math.max(0, Math.floor(seconds));
    return String(Math.floor(s / 60)).padStart(2, "0") + ":" + String(s % 60).padStart(2, "0");
  }

  async function post(path, payload) {
    const headers = { "Content-Type": "application/json", "X-Station-Token": token };
    const response = await fetch(path, { method: "POST", headers, body: JSON.stringify(payload || {}) });
    const answer = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(answer.error || response.statusText);
    return answer;
  }

  // -- tiles and tables ------------------------------------------------------------------------------------
  function chip(tile, extra) {
    const classes = ["chip", tile.colour];
    if (tile.text.length > 1) classes.push("two");
    if (tile.uncertain) classes.push("uncertain");
    if (tile.mark) classes.push(tile.mark);
    if (tile.corrected_from) classes.push("corrected");
    let title = tile.label;
    if (tile.uncertain) title += " (uncertain reading" + (tile.confidence !== undefined ? " " + tile.confidence : "") + ")";
    if (tile.corrected_from) title += " (corrected, read as " + tile.corrected_from + ")";
    if (tile.mark === "to-rack") title += ": back to the rack";
    if (tile.mark === "to-table") title += ": put back on the table";
    return el("span", { class: classes.join(" "), title, "data-label": tile.label, ...(extra || {}) }, tile.text);
  }

  function inlineTiles(labels) {
    return el("span", { class: "inline-tiles" }, labels.map((label) => chip(labelTile(label))));
  }

  function labelTile(label) {
    if (label === "joker") return { label, colour: "joker", text: "☺" };
    const [colour, number] = label.split("-");
    return { label, colour, text: number };
  }

  function renderTable(container, view, options) {
    const opts = options || {};
    container.replaceChildren();
    if (!view || view.tiles === 0) {
      container.append(el("div", { class: "empty-table", text: view ? "The table is empty." : "No reading yet." }));
      return;
    }
    for (const set of view.sets) {
      const classes = ["set"];
      if (!set.valid) classes.push("invalid");
      if (set.changed) classes.push("changed");
      const tiles = set.tiles.map((tile, position) =>
        chip(tile, opts.pickable ? { "data-table": opts.which, "data-set": set.index, "data-pos": position } : null),
      );
      container.append(el("div", { class: classes.join(" "), title: set.valid ? "" : "not a valid set" }, tiles));
    }
    if (view.loose.length) {
      const tiles = view.loose.map((tile, position) =>
        chip(tile, opts.pickable ? { "data-table": opts.which, "data-set": -1, "data-pos": position } : null),
      );
      container.append(el("div", { class: "set loose", title: "loose tiles" }, tiles));
    }
  }

  // -- status: on move, opened, timer ----------------------------------------------------------------------
  function renderStatus(next) {
    status = next;
    statusAt = performance.now();
    // Reading behind the camera (status.behind, from the live session): moves now may be missed, so say it.
    $("behind").hidden = !next.behind;
    $("behind").textContent = next.behind ? "Reading " + next.behind.behind_s.toFixed(1) +
      " s behind the camera: a move now may be missed · the next move is REVIEW" : "";
    $("player-name").textContent = "Player " + (next.player + 1);
    const waiting = next.pending_restore ? (reviewing ? " · the referee decides first" : " · restore first") : "";
    const ending = next.over ? " · game over" : next.pool_empty ? (next.last_round ? " · pool empty: last round" : " · pool empty") : "";
    $("player-seat").textContent = next.seats[next.player] + " of the picture" + waiting + ending;
    // The way play goes round the table (the profile's, seen from above) and how the camera sees the table.
    const turn = next.direction === "counterclockwise" ? "↺ counter-clockwise" : "↻ clockwise";
    $("direction").textContent = turn + " · " + next.orientation;
    $("direction").title = "Play goes " + next.direction + " seen from above; camera: " + next.orientation +
      (next.redeals ? " · re-dealt " + next.redeals + "×" : "");
    const players = $("players");
    players.replaceChildren();
    for (let p = 0; p < next.players; p++) {
      const opened = next.opened[p];
      const declared = (next.declared || []).includes(p);
      const classes = ["player"];
      if (opened) classes.push("is-opened");
      if (p === next.player) classes.push("on-move");
      players.append(
        el("div", { class: classes.join(" "), "data-player": p },
          el("span", { class: "name", text: "P" + (p + 1) + " · " + next.seats[p] }),
          el("span", { class: "opened", text: opened ? "✓ opened" : declared ? "opens next round" : "not opened" })),
      );
    }
    $("timer-limit").textContent = next.time_limit_s ? "limit " + clockText(next.time_limit_s) : "no time limit";
    updateTimer();
  }

  function updateTimer() {
    const timer = $("timer");
    if (!status || status.elapsed_s === null) {
      $("timer-value").textContent = "--:--";
      timer.className = "box timer";
      return;
    }
    // Between ticks the time runs on locally, at most a second and a half past the last tick.
    const drift = Math.min(1.5, (performance.now() - statusAt) / 1000);
    const elapsed = status.elapsed_s + drift;
    const limit = status.time_limit_s;
    let cls = "box timer";
    if (limit) {
      const remaining = limit - elapsed;
      $("timer-caption").textContent = "Time left";
      $("timer-value").textContent = remaining > 0 ? clockText(Math.ceil(remaining)) : "TIME";
      if (remaining <= 0) cls += " over";
      else if (remaining <= status.warn_s) cls += " warn";
    } else {
      $("timer-caption").textContent = "Move time";
      $("timer-value").textContent = clockText(elapsed);
    }
    timer.className = cls;
  }

  // -- the ruling banner -------------------------------------------------------------------------------------
  function actionButton(action, move, label, key) {
    const attrs = { type: "button", "data-action": action, "data-move": move };
    if (!key) return el("button", { ...attrs, text: label });
    return el("button", { ...attrs, "data-key": key, title: label + " (key " + key + ")" }, label, el("kbd", { text: key }));
  }

  function renderBanner(banner, table) {
    const box = $("banner");
    const verdict = banner.verdict;
    const wasRevert = box.dataset.key;
    box.className = "banner " + (verdict || "none");
    $("banner-verdict").textContent = verdict ? verdict.toUpperCase() : "–";
    const content = [];
    const actions = [];
    const restorePanel = $("panel-restore");
    restorePanel.hidden = true;
    $("tables").classList.remove("two-tables");
    $("current-title").textContent = "On the table";
    renderTable($("current-table"), table);
    if (verdict) {
      const who = "Player " + (banner.player + 1) + (banner.seat ? " (" + banner.seat + ")" : "");
      const what = banner.kind === "draw" ? "drew a tile" : banner.played.length ? "played" : "changed the table";
      const title = "Move " + banner.number + " · " + who + " " + what;
      const penalty = verdict === "revert" ? " · penalty " + banner.penalty_tiles + " tile" + (banner.penalty_tiles === 1 ? "" : "s") : "";
      const played = banner.kind !== "draw" && banner.played.length ? inlineTiles(banner.played) : null;
      content.push(el("div", { class: "banner-title" }, title, " ", played, penalty));
      // The same player went on after a part of the turn was ruled: this ruling is the whole turn's, not a move more.
      if (banner.amended) content.push(el("div", { class: "amended-note", text: banner.amended_text }));
      const reasons = banner.violations.map((v) => el("li", {}, el("b", { text: v.code }), ": ", detailText(v.detail)));
      if (verdict === "review") {
        for (const u of banner.uncertain) reasons.push(el("li", {}, "Uncertain reading: " + u.text));
      }
      if (banner.decision) reasons.push(el("li", { text: "Decided by the referee: " + banner.decision.toUpperCase() }));
      if (reasons.length) content.push(el("ul", {}, reasons));
      if (verdict === "revert") {
        const waiting = banner.restore_state === "waiting";
        if (waiting && (banner.still_to_rack.length || banner.still_to_table.length)) {
          const lines = [];
          if (banner.still_to_rack.length) lines.push(el("div", {}, "Back to the rack: ", inlineTiles(banner.still_to_rack)));
          if (banner.still_to_table.length) lines.push(el("div", {}, "Put back on the table: ", inlineTiles(banner.still_to_table)));
          content.push(el("div", { id: "send-back", class: "send-back" }, lines));
        }
        content.push(el("div", { class: "restore-state " + banner.restore_state,
          text: waiting ? "Waiting for the table to be restored" : "Table restored ✓" }));
        restorePanel.hidden = false;
        $("tables").classList.add("two-tables");
        $("restore-title").textContent = "Restore this layout (before move " + banner.number + ")";
        $("current-title").textContent = waiting ? "On the table now" : "On the table";
        renderTable($("restore-table"), banner.restore_table);
        renderTable($("current-table"), banner.current_table);
        actions.push(actionButton("accept", banner.number, "Revert stands", "A"), actionButton("ok", banner.number, "Overrule: move is OK", "O"));
      } else if (verdict === "review") {
        $("current-title").textContent = "On the table (uncertain tiles marked ?)";
        actions.push(actionButton("ok", banner.number, "Move is OK", "O"), actionButton("revert", banner.number, "Order a revert", "R"));
      } else {
        actions.push(actionButton("revert", banner.number, "Order a revert", "R"));
      }
      actions.push(actionButton("correct", banner.number, "Correct a tile…", "C"));
    } else {
      content.push(el("div", { class: "banner-title", text: banner.title || "Waiting for the first move" }));
    }
    $("banner-body").replaceChildren(...content);
    requestAnimationFrame(fitTables);
    $("banner-actions").replaceChildren(...actions);
    const key = verdict === "revert" ? String(banner.number) : "";
    if (key && key !== wasRevert) box.classList.add("fresh");
    box.dataset.key = key;
  }

  // A violation's detail, the rule it cites ("[profile: source, section]" at its end) in smaller type.
  function detailText(detail) {
    const cited = /^(.*?)\s*(\[[^\[\]]*\])$/.exec(detail);
    return cited ? [cited[1] + " ", el("span", { class: "cite", text: cited[2] })] : [detail];
  }

  // Chips as big as the panel allows: readable from across the room, the whole table in view if it can be.
  function fitTables() {
    for (const id of ["current-table", "restore-table"]) {
      const table = $(id);
      const panel = table.parentElement;
      if (panel.hidden) continue;
      let scale = 1.6;
      for (; scale > 0.3; scale -= 0.05) {
        table.style.setProperty("--scale", scale.toFixed(2));
        if (panel.scrollHeight <= panel.clientHeight && panel.scrollWidth <= panel.clientWidth) break;
      }
    }
  }
  window.addEventListener("resize", fitTables);
  // A panel that changes size (the header wrapping, the banner growing) fits its chips again.
  if (window.ResizeObserver) {
    const observer = new ResizeObserver(() => requestAnimationFrame(fitTables));
    for (const id of ["panel-current", "panel-restore"]) observer.observe($(id));
  }

  // -- move log and events -------------------------------------------------------------------------------------
  function renderMoves(moves) {
    const list = $("moves");
    list.replaceChildren();
    for (const move of moves) {
      const what = move.kind === "draw" ? "drew a tile" : move.played.length ? "played" : "changed the table";
      const head = el("div", { class: "move-head" },
        el("b", { text: "#" + move.number }),
        el("span", { class: "what" }, "P" + (move.player + 1) + " " + what + " ",
          move.kind !== "draw" && move.played.length ? inlineTiles(move.played) : null),
        el("span", { class: "details", text: Math.round(move.elapsed_s || 0) + " s" }),
        el("span", { class: "tag " + move.verdict, text: move.verdict.toUpperCase() }));
      const lines = move.violations.map((v) => el("div", { class: "details", text: v.code + ": " + v.detail }));
      for (const u of move.uncertain) lines.push(el("div", { class: "details", text: "uncertain: " + u.text }));
      if (move.amended) lines.push(el("div", { class: "details amended-note", text: move.amended_text }));
      if (move.at_limit) lines.push(el("div", { class: "details at-limit", text: move.at_limit.text }));
      if (move.ruled !== move.verdict) lines.push(el("div", { class: "details", text: "ruled " + move.ruled.toUpperCase() + " by the camera" }));
      for (const o of move.overrides) lines.push(el("div", { class: "override" + (o.undone ? " undone" : ""), text: "referee: " + o.text }));
      const actions = el("div", { class: "move-actions" },
        actionButton("accept", move.number, "Accept"),
        move.verdict !== "ok" ? actionButton("ok", move.number, "OK") : null,
        move.verdict !== "revert" ? actionButton("revert", move.number, "Revert") : null,
        move.kind !== "draw" || move.played.length ? actionButton("correct", move.number, "Correct tile…") : null);
      list.append(el("li", { class: "move " + move.verdict + (move.amended ? " amended" : ""), "data-move": move.number }, head, lines, actions));
    }
  }

  function renderEvents(events) {
    // A move's line that an amendment replaced (the part of a turn ruled as it settled) is struck through.
    $("events").replaceChildren(...events.map((e) =>
      el("li", { "data-seq": e.seq, "data-event": e.event, class: e.replaced ? "replaced" : null,
        title: e.replaced ? "replaced: the whole turn was ruled again" : null },
        el("span", { class: "time", text: e.time_s !== null && e.time_s !== undefined ? clockText(e.time_s) : "" }), e.text)));
  }

  function render(next) {
    reviewing = next.banner.verdict === "review";
    renderStatus(next.status);
    renderBanner(next.banner, next.table);
    renderMoves(next.moves);
    renderEvents(next.events);
    const undo = $("undo");
    undo.disabled = !next.undo;
    undo.title = next.undo ? "Undo: " + next.undo : "No override to undo";
    renderEnded(next.ended);
    body.dataset.seq = next.seq;
  }

  // A video watched to its end: the page stays with the last ruling and says how the game went; nothing is left
  // to press or overrule.
  function renderEnded(ended) {
    const box = $("game-over");
    body.classList.toggle("ended", Boolean(ended));
    box.hidden = !ended;
    if (!ended) return;
    $("over-reason").textContent = ended.reason === "end of the video" ? "End of the video" : ended.reason;
    const restores = ended.restores ? " · " + ended.restores + " restore" + (ended.restores === 1 ? "" : "s") : "";
    $("over-summary").textContent = ended.text + restores;
    for (const button of document.querySelectorAll("button[data-action], #undo, #table-words")) button.disabled = true;
  }

  // -- sound --------------------------------------------------------------------------------------------------
  function alarm(seq) {
    if (seq <= lastRevertSeq) return;
    lastRevertSeq = seq;
    body.dataset.sounds = String(Number(body.dataset.sounds) + 1);
    if (!soundOn) return;
    sound.currentTime = 0;
    sound.play().catch(() => { $("sound").textContent = "♪ Click for sound"; });
  }

  function heard(event) {
    if (event.verdict === "revert" && (event.event === "move" || (event.event === "override" && event.action === "revert"))) {
      alarm(event.seq);
    }
  }

  // -- actions ------------------------------------------------------------------------------------------------
  async function pressClock() {
    const now = performance.now();
    if (now - lastClock < CLOCK_DEBOUNCE_MS) return;  // a bounce, not a second move
    lastClock = now;
    const key = $("clock-key");
    key.classList.add("pressed");
    setTimeout(() => key.classList.remove("pressed"), 250);
    body.dataset.clockPresses = String(Number(body.dataset.clockPresses) + 1);
    try {
      await post("api/clock");
    } catch (error) {
      flash("Clock key not sent: " + error.message);
    }
  }

  async function override(payload) {
    try {
      await post("api/override", payload);
    } catch (error) {
      flash("Override not recorded: " + error.message);
      throw error;
    }
  }

  function flash(text) {
    const box = $("connection");
    box.textContent = text;
    box.className = "connection offline";
  }

  document.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-action]");
    if (!button) return;
    const action = button.dataset.action;
    const move = Number(button.dataset.move);
    button.blur();
    if (action === "correct") openCorrection(move);
    else override({ action, move }).catch(() => {});
  });

  $("clock-key").addEventListener("click", (event) => {
    event.currentTarget.blur();
    pressClock();
  });
  $("undo").addEventListener("click", (event) => {
    event.currentTarget.blur();
    override({ action: "undo" }).catch(() => {});
  });
  $("sound").addEventListener("click", (event) => {
    soundOn = !soundOn;
    event.currentTarget.textContent = soundOn ? "♪ Sound on" : "♪ Sound off";
    event.currentTarget.blur();
    if (soundOn) sound.play().then(() => sound.pause()).catch(() => {});  // unlocks audio in the browser
  });

  // -- the referee's words on the table: the pool ran out, a re-deal, "I'll open next round", went out --------
  let wordPlayer = null;

  function pickPlayer(p) {
    wordPlayer = p;
    for (const node of $("word-players").querySelectorAll("button")) node.classList.toggle("picked", Number(node.dataset.player) === p);
  }

  function openWords() {
    if (!status || body.classList.contains("ended")) return;
    const players = $("word-players");
    players.replaceChildren();
    for (let p = 0; p < status.players; p++) {
      players.append(el("button", { type: "button", "data-player": p, text: "P" + (p + 1), title: "player " + (p + 1) + " (key " + (p + 1) + ")" }));
    }
    pickPlayer(status.player);
    $("word-error").textContent = "";
    $("word-dialog").showModal();
  }

  async function sayWord(kind) {
    try {
      await post("api/word", { event: kind, player: wordPlayer });
      $("word-dialog").close();
    } catch (error) {
      $("word-error").textContent = error.message;
    }
  }

  $("table-words").addEventListener("click", (event) => {
    event.currentTarget.blur();
    openWords();
  });
  $("word-form").addEventListener("click", (event) => {
    const who = event.target.closest("button[data-player]");
    if (who) return pickPlayer(Number(who.dataset.player));
    const word = event.target.closest("button[data-word]");
    if (word) sayWord(word.dataset.word);
  });
  $("word-dialog").addEventListener("keydown", (event) => {
    if (event.repeat || event.ctrlKey || event.altKey || event.metaKey || event.key.length !== 1) return;
    const key = event.key.toUpperCase();
    if (/^[1-6]$/.test(key) && Number(key) <= status.players) {
      event.preventDefault();
      return pickPlayer(Number(key) - 1);
    }
    const button = $("word-form").querySelector('button[data-key="' + key + '"]');
    if (!button) return;
    event.preventDefault();
    button.click();
  });

  function typing(target) {
    return target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.isContentEditable);
  }

  // The space bar is the clock key anywhere on the page (not while typing or in the correction dialog);
  // its keyup is swallowed too, so a focused button is never "clicked" by it.
  // The referee's word on the ruling shown, from the keyboard: the key each banner button names (A: the revert
  // stands, O: the move is OK, R: order a revert, C: correct a tile), U: undo the last override, T: a word on the
  // table (the pool ran out, a re-deal, "I'll open next round", went out).
  document.addEventListener("keydown", (event) => {
    if (typing(event.target) || $("correct-dialog").open || $("word-dialog").open || event.ctrlKey || event.altKey || event.metaKey) return;
    if (event.code === "Space") {
      event.preventDefault();
      if (!event.repeat && !body.classList.contains("ended")) pressClock();
      return;
    }
    if (event.repeat || event.key.length !== 1) return;
    const key = event.key.toUpperCase();
    const button = key === "U" ? $("undo") : key === "T" ? $("table-words") : $("banner-actions").querySelector('button[data-key="' + key + '"]');
    if (!button || button.disabled) return;
    event.preventDefault();
    button.click();
  });
  document.addEventListener("keyup", (event) => {
    if (event.code === "Space" && !typing(event.target) && !$("correct-dialog").open) event.preventDefault();
  });

  // -- correcting a misread tile -------------------------------------------------------------------------------
  let picked = null;
  let correcting = null;

  async function openCorrection(number) {
    const response = await fetch("api/moves/" + number);
    if (!response.ok) return flash("Move " + number + " not found");
    const move = await response.json();
    correcting = number;
    picked = null;
    $("correct-title").textContent = "Correct a misread tile of move " + number;
    $("correct-picked").textContent = "No tile picked yet.";
    $("correct-error").textContent = "";
    $("correct-label").value = "";
    renderTable($("correct-before"), move.before, { pickable: true, which: "before" });
    renderTable($("correct-after"), move.after, { pickable: true, which: "after" });
    // A move over time: the table as read when the limit passed, beside before and after (not corrected here).
    const atLimit = move.at_limit;
    $("correct-at-limit-box").hidden = !atLimit;
    if (atLimit) {
      $("correct-at-limit-title").textContent = "At the time limit (" + clockText(atLimit.passed_s || 0) + ")" +
        (atLimit.touched === true ? ", touched after it" : atLimit.touched === false ? ", not touched after it" : "");
      if (atLimit.seen) renderTable($("correct-at-limit"), atLimit.table);
      else $("correct-at-limit").replaceChildren(el("div", { class: "empty-table", text: "Not seen (hands over the table)." }));
    }
    $("correct-dialog").showModal();
  }

  $("correct-form").addEventListener("click", (event) => {
    const target = event.target.closest(".chip[data-table]");
    if (!target) return;
    for (const node of $("correct-form").querySelectorAll(".chip.picked")) node.classList.remove("picked");
    target.classList.add("picked");
    picked = { table: target.dataset.table, place: [Number(target.dataset.set), Number(target.dataset.pos)], was: target.dataset.label };
    const where = picked.place[0] < 0 ? "loose" : "set " + (picked.place[0] + 1);
    $("correct-picked").textContent = "Picked: " + picked.table + ", " + where + ", tile " + (picked.place[1] + 1) + " (read as " + picked.was + ")";
    $("correct-label").focus();
  });

  $("correct-form").addEventListener("submit", async (event) => {
    if (event.submitter && event.submitter.value !== "save") return;
    event.preventDefault();
    if (!picked) {
      $("correct-error").textContent = "Click the misread tile first.";
      return;
    }
    const label = $("correct-label").value.trim();
    if (!label) {
      $("correct-error").textContent = "Say what the tile is, e.g. red-7.";
      return;
    }
    try {
      await override({ action: "correct", move: correcting, table: picked.table, place: picked.place, label });
      $("correct-dialog").close();
    } catch (error) {
      $("correct-error").textContent = error.message;
    }
  });

  const labels = $("labels");
  for (const colour of ["black", "red", "blue", "orange"]) {
    for (let n = 1; n <= 13; n++) labels.append(el("option", { value: colour + "-" + n }));
  }
  labels.append(el("option", { value: "joker" }));

  // -- the camera view ------------------------------------------------------------------------------------------
  // The station encodes the view at most twice a second for all pages; a picture the page already shows is
  // answered 304 (its ETag), so only new pictures travel.
  async function refreshFrame() {
    try {
      const headers = frameTag ? { "If-None-Match": frameTag } : {};
      const response = await fetch("frame.jpg", { cache: "no-store", headers });
      if (response.status === 200) {
        const blob = await response.blob();
        const next = URL.createObjectURL(blob);
        $("frame").src = next;
        if (frameUrl) URL.revokeObjectURL(frameUrl);
        frameUrl = next;
        frameTag = response.headers.get("ETag");
      }
      if (response.status === 200 || response.status === 304) {
        body.dataset.frames = String(Number(body.dataset.frames) + 1);
      }
    } catch (error) {
      // the station is restarting or gone: try again below
    }
    setTimeout(refreshFrame, 500);
  }

  // -- updates ---------------------------------------------------------------------------------------------------
  // A station that restarted has a new page token (and, off loopback, asks for the secret again): after a lost
  // connection the page reads its token anew; a login page instead means reloading, to show it.
  async function renewToken() {
    try {
      const response = await fetch("./", { cache: "no-store" });
      if (response.status === 401) {
        location.reload();
        return;
      }
      if (!response.ok) return;
      const page = new DOMParser().parseFromString(await response.text(), "text/html");
      const meta = page.querySelector('meta[name="station-token"]');
      if (meta) token = meta.content;
    } catch (error) {
      // still away: the next reconnection tries again
    }
  }

  function connect() {
    const address = new URL("ws", location.href);
    address.protocol = location.protocol === "https:" ? "wss:" : "ws:";
    const socket = new WebSocket(address.href);
    socket.onopen = () => {
      $("connection").textContent = "live";
      $("connection").className = "connection online";
      if (dropped) renewToken();
      dropped = false;
    };
    socket.onmessage = (message) => {
      const data = JSON.parse(message.data);
      if (data.type === "state") render(data.state);
      else if (data.type === "tick") renderStatus(data.status);
      else if (data.type === "event") heard(data.event);
    };
    socket.onclose = () => {
      dropped = true;
      if (!document.hidden) renewToken();  // a 401 here: the station restarted with a secret, log in again
      $("connection").textContent = "reconnecting…";
      $("connection").className = "connection offline";
      setTimeout(connect, 1000);
    };
  }

  async function start() {
    try {
      const response = await fetch("api/state");
      if (response.ok) {
        const first = await response.json();
        render(first);
        // A REVERT already on the table when the page opens is not news: no alarm for it.
        lastRevertSeq = first.seq;
      }
    } catch (error) {
      flash("station not reachable");
    }
    connect();
    refreshFrame();
    setInterval(updateTimer, 200);
  }

  start();
})();
