// uno_env web app: one page, one WebSocket (/ws); the server decides everything, this draws it.
"use strict";
(() => {
  const $ = (sel, root = document) => root.querySelector(sel);
  const $$ = (sel, root = document) => [...root.querySelectorAll(sel)];
  const COLOR_VAR = { red: "var(--red)", yellow: "var(--yellow)", green: "var(--green)", blue: "var(--blue)",
    pink: "var(--pink)", purple: "var(--purple)" };
  const DRAW_REASON = { turn: "", draw_two: " (Draw Two)", draw_four: " (Wild Draw Four)",
    challenge_guilty: " (caught bluffing)", challenge_innocent: " (lost the challenge)", uno_penalty: " (UNO penalty)",
    greyskull: " (by the power of Greyskull)", start_draw_two: " (first card Draw Two)" };
  const PHASE_TEXT = { play: "play or draw", play_drawn: "play or keep the drawn card", choose_color: "name a colour",
    give_away: "give away a colour", challenge: "challenge or accept", uno: "call UNO", catch: "catch or let pass",
    swap: "choose a hand to swap with", stack: "stack or draw" };

  let OPTS = null;          // /api/options
  let ws = null;
  let mode = null;          // "play" | "watch" | "replay"
  let edition = "classic";
  let queue = [];           // table messages waiting to be shown (opponents' moves animate one at a time)
  let busy = false;
  let skipping = false;
  let current = null;       // the message on screen
  let selected = -1;        // keyboard-selected card in the hand
  let keymap = {};          // key -> button, rebuilt at each render
  let summaryShown = null;  // round number whose summary was shown
  let unoTimer = null;
  let replayTimer = null;
  let seekTimer = null;
  let reconnectDelay = 400;
  let pendingAct = false;
  let version = 0;          // counts renders (data-version on <body>: tests wait for it to move on)

  // ------------------------------------------------------------------ connection
  function connect() {
    const proto = location.protocol === "https:" ? "wss" : "ws";
    ws = new WebSocket(`${proto}://${location.host}/ws`);
    ws.onopen = () => { $("#conn").classList.add("ok"); reconnectDelay = 400; };
    ws.onclose = () => {
      $("#conn").classList.remove("ok");
      setTimeout(connect, reconnectDelay);
      reconnectDelay = Math.min(8000, reconnectDelay * 2);
    };
    ws.onmessage = (event) => onMessage(JSON.parse(event.data));
  }

  function send(message) {
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(message));
    else toast("Not connected to the server; retrying...");
  }

  function onMessage(m) {
    switch (m.type) {
      case "hello": {
        const saved = JSON.parse(sessionStorage.getItem("uno-session") || "null");
        if (saved) send({ type: "resume", session: saved.session, token: saved.token });
        break;
      }
      case "session":
        sessionStorage.setItem("uno-session", JSON.stringify({ session: m.session, token: m.token }));
        mode = m.kind;
        queue = []; busy = false; current = null; summaryShown = null; selected = -1; replayWanted = -1;
        stopReplayPlay();
        $("#log-list").innerHTML = "";
        showTable();
        break;
      case "table": queue.push(m); if (!busy) pump(); break;
      case "frame": renderFrame(m); break;
      case "error":
        pendingAct = false;
        if (m.request === "resume") { sessionStorage.removeItem("uno-session"); break; }
        toast(m.message);
        if (current && !busy && mode === "play") renderPlay(current, false);
        else document.body.dataset.version = String(++version);
        break;
      case "saved": download(m.filename, m.data); toast("Saved: the file holds the whole game, every hand included.", true); break;
      case "replay_data": download(m.filename, m.data); break;
      case "left": sessionStorage.removeItem("uno-session"); mode = null; showSetup("play"); break;
      default: break;
    }
  }

  // ------------------------------------------------------------------ helpers
  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else if (key === "data") Object.assign(node.dataset, value);
      else node.setAttribute(key, value);
    }
    for (const child of children) if (child != null) node.append(child);
    return node;
  }
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const speed = () => Number($("#speed").value);

  function toast(text, ok = false) {
    const box = $("#toast");
    box.textContent = text;
    box.style.background = ok ? "#2e7d32" : "#b71c1c";
    box.classList.add("show");
    clearTimeout(toast.timer);
    toast.timer = setTimeout(() => box.classList.remove("show"), 4000);
  }

  function download(filename, data) {
    const url = URL.createObjectURL(new Blob([JSON.stringify(data)], { type: "application/json" }));
    const link = el("a", { href: url, download: filename });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }

  function readJsonFile(input, then) {
    const file = input.files[0];
    input.value = "";
    if (!file) return;
    if (file.size > OPTS.max_message_bytes) { toast(`${file.name} is too large (${file.size} bytes)`); return; }
    file.text().then((text) => {
      let data;
      try { data = JSON.parse(text); } catch (err) { toast(`${file.name} is not JSON: ${err.message}`); return; }
      if (typeof data !== "object" || data === null || Array.isArray(data)) { toast(`${file.name} is not a saved game or replay`); return; }
      then(data);
    });
  }

  const ed = () => OPTS.editions[edition];
  const colorOf = (code) => ed().colors[ed().letters.indexOf(code[0])];

  // ------------------------------------------------------------------ cards
  const SVG = {
    S: '<svg viewBox="0 0 40 40"><circle cx="20" cy="20" r="13" fill="none" stroke="currentColor" stroke-width="5"/><line x1="11" y1="29" x2="29" y2="11" stroke="currentColor" stroke-width="5"/></svg>',
    R: '<svg viewBox="0 0 40 40"><path d="M7 15h22l-6-6M33 25H11l6 6" fill="none" stroke="currentColor" stroke-width="4.5" stroke-linecap="round" stroke-linejoin="round"/></svg>',
    WU: '<svg viewBox="0 0 40 40"><circle cx="20" cy="20" r="15" fill="#7ee06d" stroke="#111" stroke-width="2"/><circle cx="14" cy="16" r="3.2" fill="#111"/><circle cx="26" cy="16" r="3.2" fill="#ff5fa2"/><path d="M10 26h20M14 23v6M20 23v6M26 23v6" stroke="#111" stroke-width="2"/></svg>',
    WK: '<svg viewBox="0 0 40 40"><path d="M10 13l4-8 6 6 6-6 4 8z" fill="#f6d33b" stroke="#8a6d00"/><circle cx="20" cy="25" r="12" fill="#8fd14f" stroke="#2e6b1f" stroke-width="2"/><ellipse cx="20" cy="28" rx="6" ry="4" fill="#6fb33a" stroke="#2e6b1f"/><circle cx="18" cy="28" r="1.3" fill="#2e6b1f"/><circle cx="22" cy="28" r="1.3" fill="#2e6b1f"/><circle cx="15" cy="21" r="2.2" fill="#fff"/><circle cx="25" cy="21" r="2.2" fill="#fff"/></svg>',
    WG: '<svg viewBox="0 0 40 40"><path d="M20 2l3.5 5v19h-7V7z" fill="#e8e8f0" stroke="#555"/><rect x="11" y="26" width="18" height="3.5" rx="1" fill="#d4a017"/><rect x="18.3" y="29.5" width="3.4" height="6.5" fill="#7a4b1f"/><circle cx="20" cy="37" r="2.3" fill="#d4a017"/></svg>',
  };

  function cardEl(code, size = "") {
    const card = el("span", { class: `card ${size}`.trim() });
    if (!code) {
      card.classList.add("back");
      card.append(el("span", { class: "oval" }), el("span", { class: "big", text: "UNO" }));
      return card;
    }
    card.dataset.code = code;
    card.title = code;
    const edition_ = ed();
    if (code === "W" || code === "W4") {
      card.classList.add("wild");
      edition_.colors.forEach((c, i) => card.style.setProperty(`--w${i}`, COLOR_VAR[c]));
      card.append(el("span", { class: "oval" }), el("span", { class: "big", text: code === "W4" ? "+4" : "" }),
        el("span", { class: "corner tl", text: code === "W4" ? "+4" : "W" }),  // the caption takes the bottom corner's place
        el("span", { class: "tag", text: code === "W4" ? "WILD +4" : "WILD" }));
      return card;
    }
    if (edition_.special && code === edition_.special.code) {
      card.classList.add("wild", `special-${code}`);
      const big = el("span", { class: "big" });
      big.innerHTML = SVG[code] || "";
      card.append(el("span", { class: "oval" }), big, el("span", { class: "corner tl", text: code }),
        el("span", { class: "tag", text: edition_.special.name.replace(/Creeperific /, "").replace(/Wild Powers of /, "") }));
      return card;
    }
    const color = colorOf(code);
    const rank = code.slice(1);
    card.classList.add(`c-${color}`);
    const big = el("span", { class: "big" });
    if (rank === "S" || rank === "R") big.innerHTML = SVG[rank];
    else big.textContent = rank === "D" ? "+2" : rank;
    const corner = rank === "D" ? "+2" : rank === "S" ? "⊘" : rank === "R" ? "⇄" : rank;
    card.append(el("span", { class: "oval" }), big, el("span", { class: "corner tl", text: corner }),
      el("span", { class: "corner br", text: corner }));
    return card;
  }

  function colorSwatch(name) {
    return el("span", { class: "swatch", style: `background:${COLOR_VAR[name] || "#888"}` });
  }

  // ------------------------------------------------------------------ screens
  function showSetup(panel) {
    $("#table").hidden = true;
    $("#setup").hidden = false;
    for (const form of $$("#setup .panel")) form.hidden = form.dataset.panel !== panel;
    for (const button of $$("#bar nav button")) button.classList.toggle("active", button.dataset.goto === panel);
    $("#save-btn").hidden = true;
    $("#leave-btn").hidden = !mode;
    $("#speed-box").hidden = panel !== "play";  // the Watch panel has its own pace: seconds per move
    $("#title").textContent = mode ? "(a game is still open: Leave ends it)" : "";
  }

  function showTable() {
    $("#setup").hidden = true;
    $("#table").hidden = false;
    $("#replay-bar").hidden = mode !== "replay";
    $("#watch-bar").hidden = mode !== "watch";
    $("#me").hidden = mode !== "play";
    $("#save-btn").hidden = mode !== "play";
    $("#leave-btn").hidden = false;
    $("#speed-box").hidden = mode !== "play";
    $("#w-replay").hidden = true;
    for (const button of $$("#bar nav button")) button.classList.toggle("active", button.dataset.goto === mode);
  }

  function setEdition(name) {
    edition = name;
    document.body.dataset.edition = name;
  }

  // ------------------------------------------------------------------ the table
  function seatName(seat, me) { return seat === me ? "You" : `Player ${seat}`; }

  function renderSeats(v, labels, me, hands, actor, action) {
    const box = $("#seats");
    box.innerHTML = "";
    const n = v.num_players;
    const order = me === null ? [...Array(n).keys()] : [...Array(n - 1).keys()].map((k) => (me + k + 1) % n);
    const known = {};
    for (const o of v.opponents || []) known[o.seat] = o.known_cards;
    for (const seat of order) {
      const turn = v.current_player === seat;
      const div = el("div", { class: "seat" + (turn ? " turn" : "") + (v.eliminated[seat] ? " out" : ""), data: { seat } });
      const head = el("div", {}, el("span", { class: "name", text: seatName(seat, me) + " " }));
      if (seat === v.dealer) head.append(el("span", { class: "badge dealer", text: "dealer", title: "deals this round" }), " ");
      if (v.teams[seat] !== null) head.append(el("span", { class: `badge team${v.teams[seat]}`, text: `team ${"AB"[v.teams[seat]]}` }), " ");
      if (v.uno_called[seat]) head.append(el("span", { class: "badge uno", text: "UNO!" }));
      div.append(head, el("div", { class: "label", text: labels[seat] }));
      const size = v.hand_sizes[seat];
      div.append(el("div", { class: "stats" }, el("span", { text: `${size} card${size === 1 ? "" : "s"}` }),
        el("span", { text: `${v.scores[seat]} pts` }), v.eliminated[seat] ? el("span", { text: "eliminated" }) : null));
      if (hands) {
        const row = el("div", { class: "hand" });
        for (const code of hands[seat]) row.append(cardEl(code, "small"));
        div.append(row);
      } else {
        const backs = el("div", { class: "backs" });
        for (let i = 0; i < Math.min(size, 12); i++) backs.append(cardEl(null, "small"));
        div.append(backs);
        if (known[seat] && known[seat].length) {
          const row = el("div", { class: "known", title: "cards of this hand you have seen" });
          for (const code of known[seat]) row.append(cardEl(code, "small"));
          div.append(row);
        }
      }
      if (actor === seat && action) div.append(el("div", { class: "bubble", text: action }));
      box.append(div);
    }
  }

  function renderCenter(v) {
    const discard = $("#discard");
    discard.innerHTML = "";
    discard.append(cardEl(v.top_card, "large"));
    $("#draw-count").textContent = `${v.draw_pile_size} to draw`;
    const active = $("#active-color");
    active.innerHTML = "";
    if (v.active_color) active.append(colorSwatch(v.active_color), `colour: ${v.active_color}`);
    else active.textContent = "colour: to be named";
    $("#direction").textContent = v.direction > 0 ? "↻ clockwise" : "↺ counter-clockwise";
    $("#penalty").textContent = v.penalty ? `+${v.penalty} pending` : "";
    $("#title").textContent = `${ed().title} · round ${v.round} · to ${v.target_score}` +
      (v.rules.scoring === "lowest" ? " (lowest wins)" : "") + (v.rules.elimination ? " · elimination" : "") +
      (v.rules.teams ? " · partners" : "");
  }

  function actionLabel(action, v) {
    const [verb, arg] = action.split(" ");
    const pp = v.pending_player;
    switch (verb) {
      case "draw": return v.phase === "stack" || v.penalty ? `Draw ${v.penalty || 1}` : "Draw";
      case "keep": return "Keep it";
      case "challenge": return `Challenge (did they hold ${v.w4_prev_color}?)`;
      case "accept": return `Accept: draw ${v.penalty || 4}`;
      case "uno": return "UNO!";
      case "no-uno": return "Don't call";
      case "catch": return `Catch player ${pp}!`;
      case "no-catch": return "Let it pass";
      case "color": return arg;
      case "give": {
        const n = v.hand.filter((c) => c[0] === ed().letters[ed().colors.indexOf(arg)]).length;
        return `Give away ${arg} (${n})`;
      }
      case "swap": {
        const target = (v.seat + Number(arg)) % v.num_players;
        return `Swap with player ${target} (${v.hand_sizes[target]} cards)`;
      }
      default: return action;
    }
  }

  function actionKey(action, v) {
    const [verb, arg] = action.split(" ");
    if (verb === "color" || verb === "give") return arg[0];
    if (verb === "swap") return String(Number(arg));
    return { draw: "d", keep: "k", challenge: "c", accept: "a", uno: "u", "no-uno": "n", catch: "c", "no-catch": "n" }[verb] || null;
  }

  function act(action) {
    if (pendingAct) return;
    pendingAct = true;
    $$("#controls button, #hand .card").forEach((b) => b.classList.add("dim"));
    send({ type: "act", action });
  }

  function addControl(label, key, onclick, cls = "", action = null) {
    const button = el("button", { type: "button", class: cls, onclick }, label);
    if (action) button.dataset.action = action;
    if (key) {
      button.append(el("span", { class: "key", text: key.toUpperCase() }));
      keymap[key.toLowerCase()] = button;
    }
    $("#controls").append(button);
    return button;
  }

  function renderPlay(m, animated) {
    const v = m.view;
    setEdition(v.edition);
    renderSeats(v, m.labels, m.seat, null, m.actor !== m.seat ? m.actor : null, m.actor !== m.seat ? m.action : null);
    renderCenter(v);
    // my hand
    const hand = $("#hand");
    hand.innerHTML = "";
    const idle = !busy || !queue.length;
    const mine = v.my_turn && idle && !m.over;
    const playable = new Set(mine ? v.legal_actions.filter((a) => a.startsWith("play ")).map((a) => a.slice(5)) : []);
    let drawnMarked = false;
    v.hand.forEach((code) => {
      const card = cardEl(code);
      if (v.drawn_card === code && !drawnMarked) { card.classList.add("drawn"); drawnMarked = true; }
      if (playable.has(code)) {
        card.classList.add("playable");
        card.dataset.action = `play ${code}`;
        card.addEventListener("click", () => act(`play ${code}`));
      } else if (mine) card.classList.add("dim");
      hand.append(card);
    });
    const cards = $$("#hand .card.playable");
    if (selected >= cards.length) selected = cards.length - 1;
    if (selected >= 0 && cards[selected]) cards[selected].classList.add("selected");
    const info = $("#me-info");
    info.innerHTML = "";
    info.append(el("strong", { text: `You (player ${m.seat})` }), el("span", { text: `${v.hand.length} cards · ${v.scores[m.seat]} pts` }));
    if (v.uno_called[m.seat]) info.append(el("span", { class: "badge uno", text: "UNO!" }));
    if (v.team !== null) info.append(el("span", { class: `badge team${v.team}`, text: `team ${"AB"[v.team]}` }));
    if (v.current_player === m.seat) info.append(el("span", { class: "badge", text: "your turn" }));
    // controls
    keymap = {};
    $("#controls").innerHTML = "";
    clearInterval(unoTimer);
    const prompt = $("#prompt");
    $("#draw-pile").classList.toggle("can-draw", mine && v.legal_actions.includes("draw"));
    pendingAct = false;
    if (m.error) toast(m.error);
    if (m.over || v.phase === "round_over" || v.phase === "game_over") {
      prompt.textContent = m.over ? "Game over." : "Round over.";
      if (idle) showSummary(v, m.labels, m.seat, m.over);
    } else if (!mine) {
      const cur = v.current_player;
      prompt.textContent = cur === null ? "" : `Player ${cur} (${m.labels[cur]}) is thinking: ${PHASE_TEXT[v.phase] || v.phase}...`;
    } else {
      prompt.textContent = promptText(v, m);
      for (const action of v.legal_actions) {
        if (action.startsWith("play ")) continue;
        const [verb, arg] = action.split(" ");
        if (verb === "color" || verb === "give") {
          const b = addControl(actionLabel(action, v), actionKey(action, v), () => act(action), "colorbtn", action);
          b.style.background = COLOR_VAR[arg];
          keymap[String(ed().colors.indexOf(arg) + 1)] = b;
        } else if (verb === "uno") {
          addControl("UNO!", "u", () => act("uno"), "uno-btn" + (m.uno.seconds_left !== null ? " urgent" : ""), action);
        } else {
          addControl(actionLabel(action, v), actionKey(action, v), () => act(action), "", action);
        }
      }
      if (v.phase === "play_drawn" && v.drawn_card && playable.has(v.drawn_card)) {
        addControl(`Play ${v.drawn_card}`, "p", () => act(`play ${v.drawn_card}`), "primary", `play ${v.drawn_card}`);
      }
      if (!v.legal_actions.includes("uno") && v.rules.uno_call === "explicit" && v.hand.length <= 2) {
        const call = addControl(m.uno.called ? "UNO called" : "UNO!", "u", () => send({ type: "uno" }), "uno-btn", "call-uno");
        call.disabled = m.uno.called;
        call.title = "Call UNO as you play your second-to-last card";
      }
      if (m.uno.seconds_left !== null && v.phase === "uno") startUnoCountdown(m.uno.seconds_left);
    }
    document.body.dataset.phase = v.phase;
    document.body.dataset.myTurn = mine ? "1" : "0";
    document.body.dataset.version = String(++version);
  }

  function promptText(v, m) {
    const pp = v.pending_player;
    switch (v.phase) {
      case "play": return v.penalty ? `Your turn: play a card or draw (${v.penalty} pending).` : "Your turn: play a card or draw.";
      case "play_drawn": return v.legal_actions.length > 1 ? `You drew ${v.drawn_card}: play it or keep it.` : `You drew ${v.drawn_card}: it does not play here, so you keep it.`;
      case "choose_color": return "Name the colour to play next.";
      case "give_away": return `${ed().special ? ed().special.flavour + " " : ""}Choose a colour to give away, one card to each player.`;
      case "challenge": return `Player ${pp} played a Wild Draw Four on you (the colour was ${v.w4_prev_color}). Challenge or accept?`;
      case "uno": return m.uno.seconds_left !== null ? "One card left: press UNO! before the time runs out." : "One card left: call UNO?";
      case "catch": return `Player ${pp} has one card and did not call UNO! Catch them?`;
      case "swap": return "Your 7: choose whose hand to swap with.";
      case "stack": return `Stack a draw card on it, or draw ${v.penalty}.`;
      default: return PHASE_TEXT[v.phase] || v.phase;
    }
  }

  function startUnoCountdown(seconds) {
    const end = performance.now() + seconds * 1000;
    const button = $("#controls .uno-btn");
    const tick = () => {
      const left = Math.max(0, (end - performance.now()) / 1000);
      if (button) button.firstChild.textContent = `UNO! ${left.toFixed(1)}s`;
      if (left <= 0) clearInterval(unoTimer);
    };
    tick();
    unoTimer = setInterval(tick, 100);
  }

  function showSummary(v, labels, me, over) {
    const key = `${v.round}:${over}`;
    if (summaryShown === key || mode !== "play") return;
    summaryShown = key;
    const body = $("#summary-body");
    body.innerHTML = "";
    const winners = v.winners || [];
    const title = over
      ? `${winners.map((s) => seatName(s, me)).join(" and ")} ${winners.length === 1 && winners[0] !== me ? "wins" : "win"} the game!`
      : `Round ${v.round}: ${seatName(v.round_winner, me)} went out`;
    body.append(el("h2", { text: title }));
    const table = el("table", {}, el("tr", {}, ...["Player", "Cards left", "This round", "Total"].map((h) => el("th", { text: h }))));
    for (let s = 0; s < v.num_players; s++) {
      const row = el("tr", { class: (over ? winners.includes(s) : s === v.round_winner) ? "winner" : "" },
        el("td", { text: s === me ? "You" : `Player ${s} (${labels[s]})` }), el("td", { text: String(v.hand_sizes[s]) }),
        el("td", { text: `${v.round_points[s] ? "+" : ""}${v.round_points[s]}` }), el("td", { text: String(v.scores[s]) }));
      table.append(row);
    }
    body.append(table);
    if (v.rules.scoring === "lowest" || v.rules.elimination) body.append(el("p", { text: `Points left in a hand count against it; the game ends at ${v.target_score}.` }));
    const actions = $("#summary-actions");
    actions.innerHTML = "";
    const dialog = $("#summary");
    if (over) {
      actions.append(el("button", { type: "button", class: "primary", id: "replay-game", onclick: () => { dialog.close(); send({ type: "replay_open", source: "game" }); } }, "Watch the replay"),
        el("button", { type: "button", onclick: () => send({ type: "replay_download" }) }, "Download replay"),
        el("button", { type: "button", onclick: () => { dialog.close(); showSetup("play"); } }, "New game"));
    } else {
      actions.append(el("button", { type: "button", class: "primary", id: "next-round", onclick: () => { dialog.close(); send({ type: "next_round" }); } }, "Next round (Enter)"),
        el("button", { type: "button", id: "summary-save", onclick: () => $("#save-btn").click() }, "Save"),
        el("button", { type: "button", id: "summary-leave", onclick: () => $("#leave-btn").click() }, "Leave"));
    }
    if (!dialog.open) dialog.showModal();
  }

  // ------------------------------------------------------------------ events
  function describe(e, me, labels) {
    const who = (s) => (s === null || s === undefined ? "nobody" : seatName(s, me));  // a sentence's subject
    const whom = (s) => (s === me ? "you" : who(s));  // an object, or a subject mid-sentence
    const does = (s, verb, third) => `${who(s)} ${s === me ? verb : third || verb + "s"}`;
    const dir = (d) => (d > 0 ? "clockwise" : "counter-clockwise");
    const special = ed().special;
    switch (e.type) {
      case "dealer": return [`Round ${e.other}: ${does(e.seat, "deal")}`, "round"];
      case "start": return [`The first card is ${e.card}`];
      case "return_w4": return ["A Wild Draw Four turned first goes back into the deck"];
      case "play": return [`${does(e.seat, "play")} ${e.card}`];
      case "pass": return [`${does(e.seat, "have", "has")} to draw but no card is left`];
      case "keep": return [`${does(e.seat, "keep")} the drawn card`];
      case "color": return [`${does(e.seat, "name")} ${e.color}`];
      case "give": return [`${special ? special.flavour + " " : ""}${does(e.seat, "give")} ${e.card || "a card"} to ${whom(e.other)}`, "flavour"];
      case "king_pig": return [`King Pig deals ${e.card} to ${whom(e.seat)}`, "flavour"];
      case "greyskull": return [`By the power of Greyskull, ${whom(e.seat)} ${e.seat === me ? "draw" : "draws"} 3 cards`, "flavour"];
      case "reshuffle": return ["The discard pile is shuffled into a new draw pile"];
      case "uno": return [`${does(e.seat, "call")} UNO!`];
      case "no_uno": return [`${does(e.seat, "do", "does")} not call UNO`];
      case "catch": return [`${does(e.seat, "catch", "catches")} ${whom(e.other)}: 2 cards!`];
      case "no_catch": return [`${does(e.seat, "let")} it pass`];
      case "challenge": return [`${does(e.seat, "challenge")} the Wild Draw Four of ${whom(e.other)}`];
      case "guilty": return [`${who(e.seat)} ${e.seat === me ? "were" : "was"} bluffing!`];
      case "innocent": return [`${who(e.seat)} ${e.seat === me ? "were" : "was"} not bluffing`];
      case "accept": return [`${does(e.seat, "accept")}`];
      case "skip": return [`${who(e.seat)} ${e.seat === me ? "are" : "is"} skipped`];
      case "reverse": return [`Play reverses: now ${dir(e.other)}`];
      case "swap": return [`${does(e.seat, "swap")} hands with ${whom(e.other)}`];
      case "rotate": return [`Every hand passes one seat ${dir(e.other)}`];
      case "eliminated": return [`${who(e.seat)} ${e.seat === me ? "are" : "is"} eliminated with ${e.other} points`];
      case "round_end": return [`${does(e.seat, "go", "goes")} out! (${e.other} points)`, "round"];
      case "game_end": return [`${who(e.seat)} ${e.seat === me ? "win" : "wins"} the game!`, "round"];
      default: return special && e.card === special.code ? [`${e.type} ${e.card}`] : [null];
    }
  }

  function logEvents(events, me, labels) {
    const list = $("#log-list");
    let i = 0;
    let flavour = null;
    while (i < events.length) {
      const e = events[i];
      if (e.type === "deal" || e.type === "dealer_draw") { i++; continue; }
      if (e.type === "draw" || e.type === "show") {
        let j = i + 1;
        while (j < events.length && events[j].type === e.type && events[j].seat === e.seat && events[j].reason === e.reason) j++;
        const group = events.slice(i, j);
        const cards = group.map((x) => x.card).filter(Boolean);
        let text;
        if (e.type === "show") text = `${seatName(e.seat, me)} shows ${seatName(e.other, me).toLowerCase()} their hand${cards.length ? ": " + cards.join(" ") : ""}`;
        else text = `${seatName(e.seat, me)} ${e.seat === me ? "draw" : "draws"} ${cards.length === group.length && cards.length ? cards.join(" ") : group.length === 1 ? "a card" : group.length + " cards"}${DRAW_REASON[e.reason] || ""}`;
        list.append(el("li", { text }));
        i = j;
        continue;
      }
      const [text, cls] = describe(e, me, labels);
      if (text) list.append(el("li", { class: cls || "", text }));
      const special = ed().special;
      if (e.type === "play" && special && e.card === special.code) {
        flavour = special.flavour || special.name;
        list.append(el("li", { class: "flavour", text: flavour }));
      }
      i++;
    }
    while (list.children.length > 400) list.firstChild.remove();
    $("#log").scrollTop = $("#log").scrollHeight;
    return flavour;
  }

  function showFlavour(text) {
    const box = $("#flavour");
    box.textContent = text || "";
    box.classList.remove("show");
    if (text) { void box.offsetWidth; box.classList.add("show"); }
  }

  function flyCard(fromSeat, code) {
    const from = $(`#seats .seat[data-seat="${fromSeat}"]`);
    const to = $("#discard");
    if (!from || !to || !code) return;
    const a = from.getBoundingClientRect();
    const b = to.getBoundingClientRect();
    const card = cardEl(code);
    card.classList.add("flying");
    card.style.left = `${a.left + a.width / 2 - 31}px`;
    card.style.top = `${a.top + a.height / 2 - 46}px`;
    document.body.append(card);
    card.getBoundingClientRect(); // lay the card out where it starts, so the move below is animated
    card.style.transform = `translate(${b.left - a.left - a.width / 2 + 40}px, ${b.top - a.top - a.height / 2 + 60}px)`;
    setTimeout(() => card.remove(), 400);
  }

  // ------------------------------------------------------------------ play: one message at a time
  async function pump() {
    busy = true;
    document.body.dataset.busy = "1";
    while (queue.length) {
      const m = queue.shift();
      const opponent = m.actor !== null && m.actor !== m.seat;
      const animate = opponent && !skipping && speed() > 0;
      current = m;
      setEdition(m.view.edition);
      const flavour = logEvents(m.events, m.seat, m.labels);
      renderPlay(m, animate);
      if (animate) {
        const played = m.events.find((e) => e.type === "play");
        if (played) flyCard(m.actor, played.card);
        showFlavour(flavour);
        await sleep(speed() * (flavour ? 2.2 : 1));
      } else if (flavour) showFlavour(flavour);
    }
    skipping = false;
    busy = false;
    document.body.dataset.busy = "0";
    if (current) renderPlay(current, false);
  }

  // ------------------------------------------------------------------ watch and replay frames
  function renderFrame(m) {
    const v = m.view;
    setEdition(v.edition);
    current = m;
    renderSeats(v, m.labels, null, m.hands, m.move ? m.move.seat : null, m.move ? m.move.action : null);
    renderCenter(v);
    $("#controls").innerHTML = "";
    $("#hand").innerHTML = "";
    keymap = {};
    if (mode === "replay") $("#log-list").innerHTML = "";
    const flavour = logEvents(m.events, null, m.labels);
    showFlavour(flavour);
    const cur = v.current_player;
    $("#prompt").textContent = m.over ? `Game over: ${v.winners.map((s) => `player ${s}`).join(" and ")} won.`
      : v.phase === "round_over" ? `Round over: player ${v.round_winner} went out.`
        : cur === null ? "" : `Player ${cur} (${m.labels[cur]}) to ${PHASE_TEXT[v.phase] || v.phase}: ${v.legal_actions.join(", ")}`;
    const moveBox = mode === "replay" ? $("#rp-move") : $("#w-move");
    if (m.move || mode === "replay") moveBox.innerHTML = "";  // a watch frame without a move keeps the last one
    if (m.move) {
      moveBox.append(el("strong", { text: `Player ${m.move.seat} (${m.move.agent}): ${m.move.action}` }));
      if (m.move.top.length) {
        moveBox.append(" - most likely:");
        for (const [action, p] of m.move.top) moveBox.append(el("span", { class: "top", text: `${action} ${(100 * p).toFixed(0)}%` }));
      }
    } else if (mode === "replay") moveBox.textContent = m.index === 0 ? "Start position" : "";
    if (mode === "replay") {
      const slider = $("#rp-slider");
      if (replayWanted < 0) replayWanted = m.index;  // a newly opened replay
      slider.max = String(m.length);
      slider.value = String(m.index);
      $("#rp-pos").textContent = `${m.index} / ${m.length}` + (m.title ? ` · ${m.title}` : "");
      if (m.index >= m.length) stopReplayPlay();
    } else {
      $("#w-pause").textContent = m.paused ? "Resume" : "Pause";
      $("#w-delay").value = String(m.delay);
      $("#w-replay").hidden = !m.over;
    }
    document.body.dataset.phase = v.phase;
    document.body.dataset.index = String(m.index);
    document.body.dataset.version = String(++version);
  }

  let replayWanted = 0;     // the position last asked for (keys pressed quickly step from it, not from the screen)
  function seek(index) {
    const max = Number($("#rp-slider").max);
    index = Math.max(0, Math.min(max, index));
    replayWanted = index;
    send({ type: "replay_seek", index });
  }
  function stopReplayPlay() { clearInterval(replayTimer); replayTimer = null; $("#rp-play").innerHTML = "&#9654;"; }
  function toggleReplayPlay() {
    if (replayTimer) { stopReplayPlay(); return; }
    $("#rp-play").innerHTML = "&#10074;&#10074;";
    if (replayWanted >= Number($("#rp-slider").max)) seek(0);
    replayTimer = setInterval(() => seek(replayWanted + 1), Math.max(150, speed() || 300));
  }

  // ------------------------------------------------------------------ setup forms
  function specSelect(name, value) {
    const select = el("select", { name });
    const notes = OPTS.opponent_notes || {};
    for (const spec of OPTS.opponents) select.append(el("option", { value: spec, text: notes[spec] ? `${spec}: ${notes[spec]}` : spec }));
    select.value = value;
    return select;
  }

  function fillAgents() {
    const play = $("#play-form");
    const n = Math.max(2, Math.min(10, Number(play.players.value) || 4));
    const seat = Math.max(0, Math.min(n - 1, Number(play.seat.value) || 0));
    const list = $("#opponent-list");
    const old = $$("select", list).map((s) => s.value);
    list.innerHTML = "";
    for (let k = 1; k < n; k++) {
      list.append(el("label", {}, `Player ${(seat + k) % n}`, specSelect(`opponent${k}`, old[k - 1] || "ppo")));
    }
    const dealer = play.first_dealer;
    const chosen = dealer.value;
    dealer.innerHTML = "";
    dealer.append(el("option", { value: "", text: "draw for it" }));
    for (let s = 0; s < n; s++) dealer.append(el("option", { value: String(s), text: `player ${s}` }));
    dealer.value = chosen && Number(chosen) < n ? chosen : "";
    const watch = $("#watch-form");
    const m = Math.max(2, Math.min(10, Number(watch.players.value) || 4));
    const agents = $("#agent-list");
    const previous = $$("select", agents).map((s) => s.value);
    const defaults = ["ppo", "rule", "ismcts", "simple"];
    agents.innerHTML = "";
    for (let s = 0; s < m; s++) agents.append(el("label", {}, `Player ${s}`, specSelect(`agent${s}`, previous[s] || defaults[s % 4])));
  }

  function numberOrNull(input) { return input.value === "" ? null : Number(input.value); }

  function playSettings() {
    const f = $("#play-form");
    const n = Number(f.players.value);
    return {
      edition: f.edition.value, players: n, seat: Number(f.seat.value), target_score: Number(f.target_score.value),
      seed: numberOrNull(f.seed), uno_time: Number(f.uno_time.value), forgetful: Number(f.forgetful.value),
      opponents: $$("#opponent-list select").map((s) => s.value), uno_call: f.uno_call.value, scoring: f.scoring.value,
      first_dealer: numberOrNull(f.first_dealer), allow_bluff: f.allow_bluff.checked, teams: f.teams.checked,
      elimination: f.elimination.checked, stacking: f.stacking.checked, seven_zero: f.seven_zero.checked,
      draw_until_playable: f.draw_until_playable.checked,
    };
  }

  function watchSettings() {
    const f = $("#watch-form");
    return {
      edition: f.edition.value, players: Number(f.players.value), target_score: Number(f.target_score.value),
      seed: numberOrNull(f.seed), delay: Number(f.delay.value), agents: $$("#agent-list select").map((s) => s.value),
    };
  }

  // ------------------------------------------------------------------ keyboard
  function onKey(event) {
    if ($("#help").open) return;
    const target = event.target;
    if (target && ["INPUT", "SELECT", "TEXTAREA"].includes(target.tagName) && target.type !== "range") return;
    const key = event.key;
    if (key === "?") { $("#help").showModal(); event.preventDefault(); return; }
    const summary = $("#summary");
    if (summary.open) {
      if (key === "Enter") { const primary = $("#summary-actions .primary"); if (primary) { primary.click(); event.preventDefault(); } }
      return;
    }
    if ($("#table").hidden) return;
    if (mode === "replay") {
      const index = replayWanted;
      const moves = { ArrowLeft: index - 1, ArrowRight: index + 1, Home: 0, End: Number($("#rp-slider").max) };
      if (key in moves) { stopReplayPlay(); seek(moves[key]); event.preventDefault(); }
      else if (key === " ") { toggleReplayPlay(); event.preventDefault(); }
      return;
    }
    if (mode !== "play") return;
    if (key === "Escape") { if (busy) skipping = true; return; }
    const cards = $$("#hand .card.playable");
    if (key === "ArrowRight" || key === "ArrowLeft") {
      if (!cards.length) return;
      selected = key === "ArrowRight" ? (selected + 1) % cards.length : (selected - 1 + cards.length) % cards.length;
      cards.forEach((c, i) => c.classList.toggle("selected", i === selected));
      event.preventDefault();
      return;
    }
    if (key === "Enter" || key === " ") {
      if (selected >= 0 && cards[selected]) { cards[selected].click(); event.preventDefault(); }
      return;
    }
    const button = keymap[key.toLowerCase()];
    if (button && !button.disabled) { button.click(); event.preventDefault(); return; }
    if (/^[1-9]$/.test(key) && cards[Number(key) - 1]) { cards[Number(key) - 1].click(); event.preventDefault(); }
  }

  // ------------------------------------------------------------------ start
  async function init() {
    OPTS = await (await fetch("/api/options")).json();
    for (const id of ["#play-edition", "#watch-edition"]) {
      const select = $(id);
      for (const [name, info] of Object.entries(OPTS.editions)) select.append(el("option", { value: name, text: info.title }));
      select.addEventListener("change", () => setEdition(select.value));
    }
    for (const input of $$("#play-form input[name=players], #play-form input[name=seat], #watch-form input[name=players]")) {
      input.addEventListener("input", fillAgents);
    }
    fillAgents();
    for (const button of $$("#bar nav button")) button.addEventListener("click", () => showSetup(button.dataset.goto));
    $("#play-form").addEventListener("submit", (e) => { e.preventDefault(); send({ type: "new_game", settings: playSettings() }); });
    $("#watch-form").addEventListener("submit", (e) => { e.preventDefault(); send({ type: "watch", settings: watchSettings() }); });
    $("#load-file").addEventListener("change", (e) => readJsonFile(e.target, (data) => send({ type: "load", data })));
    $("#replay-file").addEventListener("change", (e) => readJsonFile(e.target, (data) => send({ type: "replay_open", source: "data", data })));
    $("#save-btn").addEventListener("click", () => send({ type: "save" }));
    $("#leave-btn").addEventListener("click", () => { $("#summary").close(); send({ type: "leave" }); });
    $("#help-btn").addEventListener("click", () => $("#help").showModal());
    $("#draw-pile").addEventListener("click", () => { if (keymap.d && $("#draw-pile").classList.contains("can-draw")) keymap.d.click(); });
    $("#rp-slider").addEventListener("input", () => { stopReplayPlay(); clearTimeout(seekTimer); seekTimer = setTimeout(() => seek(Number($("#rp-slider").value)), 60); });
    $("#rp-prev").addEventListener("click", () => { stopReplayPlay(); seek(replayWanted - 1); });
    $("#rp-next").addEventListener("click", () => { stopReplayPlay(); seek(replayWanted + 1); });
    $("#rp-start").addEventListener("click", () => { stopReplayPlay(); seek(0); });
    $("#rp-end").addEventListener("click", () => { stopReplayPlay(); seek(Number($("#rp-slider").max)); });
    $("#rp-play").addEventListener("click", toggleReplayPlay);
    $("#w-pause").addEventListener("click", () => send({ type: "watch_control", paused: !(current && current.paused) }));
    $("#w-delay").addEventListener("change", () => send({ type: "watch_control", delay: Number($("#w-delay").value) }));
    $("#w-replay").addEventListener("click", () => send({ type: "replay_open", source: "game" }));
    document.addEventListener("keydown", onKey);
    showSetup("play");
    document.body.dataset.busy = "0";
    connect();
  }

  init();
})();
