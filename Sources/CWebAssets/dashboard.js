"use strict";
(function () {
  var main = document.getElementById("main");
  var live = document.getElementById("live");
  var banner = document.getElementById("stream-down");
  var messages = document.getElementById("messages");
  var pending = null, busy = false, again = false, down = false, source = null;
  function relative(ms) {
    var d = ms - Date.now(), a = Math.abs(d);
    if (a < 1000) return "now";
    var t;
    if (a < 60000) t = Math.round(a / 1000) + " s";
    else if (a < 3600000) t = Math.floor(a / 60000) + " min " + Math.floor((a % 60000) / 1000) + " s";
    else if (a < 86400000) t = Math.floor(a / 3600000) + " h " + Math.floor((a % 3600000) / 60000) + " min";
    else t = Math.floor(a / 86400000) + " d " + Math.floor((a % 86400000) / 3600000) + " h";
    return d > 0 ? "in " + t : t + " ago";
  }
  function tick() {
    // While refreshd does not answer, what the page shows is as of then: no countdown moves.
    if (down) return;
    var times = document.querySelectorAll("[data-countdown]");
    for (var i = 0; i < times.length; i++) {
      var ms = parseInt(times[i].getAttribute("data-countdown"), 10);
      if (!isNaN(ms)) times[i].textContent = relative(ms);
    }
  }
  // Attributes the operator owns: a details' open state, a field's value, a form's binding.
  function kept(element, name) {
    var tag = element.nodeName;
    return (tag === "DETAILS" && name === "open") || name === "data-bound" ||
      ((tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") && (name === "value" || name === "checked"));
  }
  function morphAttributes(from, to) {
    for (var i = from.attributes.length - 1; i >= 0; i--) {
      var name = from.attributes[i].name;
      if (!to.hasAttribute(name) && !kept(from, name)) from.removeAttribute(name);
    }
    for (var j = 0; j < to.attributes.length; j++) {
      var a = to.attributes[j];
      if (!kept(from, a.name) && from.getAttribute(a.name) !== a.value) from.setAttribute(a.name, a.value);
    }
  }
  function same(a, b) {
    return a.nodeType === b.nodeType && a.nodeName === b.nodeName && (a.nodeType !== 1 || !a.id);
  }
  function morph(from, to) {
    if (from.hasAttribute("data-keep")) return;
    morphAttributes(from, to);
    var ids = {};
    for (var k = from.firstChild; k; k = k.nextSibling) if (k.nodeType === 1 && k.id) ids[k.id] = k;
    var cursor = from.firstChild;
    var fresh = Array.prototype.slice.call(to.childNodes);
    for (var i = 0; i < fresh.length; i++) {
      var n = fresh[i], match = null;
      if (n.nodeType === 1 && n.id) {
        if (ids[n.id] && ids[n.id].nodeName === n.nodeName) { match = ids[n.id]; delete ids[n.id]; }
      } else if (cursor && same(cursor, n)) {
        match = cursor;
      }
      if (!match) { from.insertBefore(document.importNode(n, true), cursor); continue; }
      if (match === cursor) cursor = cursor.nextSibling; else from.insertBefore(match, cursor);
      if (n.nodeType === 1) morph(match, n);
      else if (match.nodeValue !== n.nodeValue) match.nodeValue = n.nodeValue;
    }
    while (cursor) { var next = cursor.nextSibling; from.removeChild(cursor); cursor = next; }
  }
  function refresh() {
    // A page costly to make again (the replay) is not reloaded at each event.
    if (main.hasAttribute("data-keep")) return;
    if (busy) { again = true; return; }
    busy = true;
    fetch(location.pathname + location.search, { headers: { "Accept": "text/html" }, cache: "no-store" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (text) {
        if (!text) return;
        var fresh = new DOMParser().parseFromString(text, "text/html").getElementById("main");
        if (!fresh) return;
        morph(main, fresh);
        tick();
        bindForms();
      })
      .catch(function () {})
      .then(function () { busy = false; if (again) { again = false; schedule(); } });
  }
  function schedule() {
    if (pending) return;
    pending = setTimeout(function () { pending = null; refresh(); }, 150);
  }
  function listEvent(o) {
    var list = document.getElementById("events");
    if (!list) return;
    var first = list.querySelector(".muted");
    if (first) first.remove();
    var item = document.createElement("li");
    item.className = "event " + (o.kind || "");
    item.textContent = (o.time ? String(o.time).slice(11, 19) + "Z " : "") + (o.message || o.kind);
    list.insertBefore(item, list.firstChild);
    while (list.children.length > 50) list.removeChild(list.lastChild);
  }
  function two(n) { return (n < 10 ? "0" : "") + n; }
  function setDown(isDown) {
    if (isDown === down) return;
    down = isDown;
    live.textContent = down ? "offline" : "live";
    live.className = down ? "off" : "on";
    if (down) {
      var t = new Date();
      banner.querySelector(".since").textContent = two(t.getHours()) + ":" + two(t.getMinutes()) + ":" + two(t.getSeconds());
      banner.hidden = false;
      document.body.classList.add("stream-down");
    } else {
      banner.hidden = true;
      document.body.classList.remove("stream-down");
      schedule();
    }
  }
  function connect() {
    if (!window.EventSource) return;
    source = new EventSource("/api/events");
    source.addEventListener("open", function () { setDown(false); live.textContent = "live"; live.className = "on"; });
    source.addEventListener("error", function () {
      setDown(true);
      // A refused stream (503: too many pages open) is not retried by the browser.
      if (source.readyState === 2) { source = null; setTimeout(connect, 5000); }
    });
    source.addEventListener("observation", function (e) {
      var o = null;
      try { o = JSON.parse(e.data); } catch (x) { return; }
      listEvent(o);
      if (o.kind !== "output") schedule();
    });
  }
  function say(text, good) {
    var item = document.createElement("p");
    item.className = "message " + (good ? "ok" : "refused");
    var words = document.createElement("span");
    words.textContent = text;
    var close = document.createElement("button");
    close.type = "button";
    close.className = "dismiss";
    close.title = "Dismiss";
    close.textContent = "×";
    item.appendChild(words);
    item.appendChild(close);
    messages.appendChild(item);
  }
  function token() {
    var t = sessionStorage.getItem("refreshd-token");
    if (!t) {
      t = window.prompt("Token for actions (from the --http-token-file)");
      if (t) sessionStorage.setItem("refreshd-token", t);
    }
    return t;
  }
  function bindForms() {
    var forms = document.querySelectorAll("form.action");
    for (var i = 0; i < forms.length; i++) {
      if (forms[i].dataset.bound) continue;
      forms[i].dataset.bound = "1";
      forms[i].addEventListener("submit", function (e) {
        e.preventDefault();
        var form = e.currentTarget, label = form.textContent.trim();
        // A bulk action asks first (the Failures page's Retry all).
        if (form.dataset.confirm && !window.confirm(form.dataset.confirm)) { say(label + ": not sent (cancelled).", false); return; }
        var t = token();
        if (!t) { say(label + ": not sent, no token given (actions need the token in refreshd's --http-token-file).", false); return; }
        // A form with fields (adding an instance) sends them in the query string.
        var url = form.getAttribute("action"), fields = new URLSearchParams(new FormData(form)).toString();
        if (fields) url += "?" + fields;
        fetch(url, { method: "POST", headers: { "Authorization": "Bearer " + t }, cache: "no-store" })
          .then(function (r) {
            if (r.status === 401 || r.status === 403) sessionStorage.removeItem("refreshd-token");
            return r.json().then(function (body) { return { status: r.status, body: body }; });
          })
          .then(function (res) {
            var ok = !!res.body.ok;
            say(ok ? (res.body.message || "done") : ((res.body.error && res.body.error.message) || ("refused: " + res.status)), ok);
            schedule();
          })
          .catch(function (x) { say(label + ": no answer from refreshd (" + x + ").", false); });
      });
    }
  }
  // The replay's form: a what-if names a folder on the server, so it is sent with the token
  // (fetched, the answer's <main> put in place); a replay alone is a plain page load.
  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (!form.classList || !form.classList.contains("replay") || !form.elements.jobs || !form.elements.jobs.value) return;
    e.preventDefault();
    var t = token();
    if (!t) { say("Replay: not sent, no token given (a what-if needs the token in refreshd's --http-token-file).", false); return; }
    var button = form.querySelector("button");
    if (button) { button.disabled = true; button.textContent = "Replaying…"; }
    var url = form.getAttribute("action") + "?" + new URLSearchParams(new FormData(form)).toString();
    fetch(url, { headers: { "Accept": "text/html", "Authorization": "Bearer " + t }, cache: "no-store" })
      .then(function (r) {
        if (r.status === 401 || r.status === 403) sessionStorage.removeItem("refreshd-token");
        return r.text();
      })
      .then(function (text) {
        var fresh = new DOMParser().parseFromString(text, "text/html").getElementById("main");
        if (!fresh) throw new Error("no page in the answer");
        main.innerHTML = fresh.innerHTML;
        tick();
      })
      .catch(function (x) {
        say("Replay: no answer from refreshd (" + x + ").", false);
        if (button) { button.disabled = false; button.textContent = "Replay"; }
      });
  });
  messages.addEventListener("click", function (e) {
    // The server's own messages (from a form sent without JavaScript) have a link to dismiss.
    if (e.target.classList && e.target.classList.contains("dismiss")) { e.preventDefault(); e.target.parentNode.remove(); }
  });
  tick();
  setInterval(tick, 1000);
  bindForms();
  connect();
})();