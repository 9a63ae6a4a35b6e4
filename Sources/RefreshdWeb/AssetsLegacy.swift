/// The dashboard's script and style sheet, served as files (`/static/...`): the
/// Content-Security-Policy allows scripts and styles from the dashboard's own origin only, so
/// there is no inline script or style anywhere.
enum AssetsLegacy {
    /// Live updates that leave the operator alone: an EventSource on `/api/events` (the
    /// runtime's observations); each event is listed, and the page is fetched again (at most
    /// every 150 ms) and `<main>` morphed into it: only nodes that differ change, matched by
    /// `id` where they have one, so a field being typed in keeps its value and focus, an open
    /// `<details>` stays open, and `data-keep` parts (the events list) are left as they are. The
    /// server's HTML stays the only rendering. Action results go to `#messages`, outside
    /// `<main>`, and stay until dismissed. While the stream is down a banner says so and the
    /// countdowns stop. Action forms are sent with `fetch` and the token kept in
    /// `sessionStorage` (asked once; never a cookie).
    static let script = #"""
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
      messages.addEventListener("click", function (e) {
        // The server's own messages (from a form sent without JavaScript) have a link to dismiss.
        if (e.target.classList && e.target.classList.contains("dismiss")) { e.preventDefault(); e.target.parentNode.remove(); }
      });
      tick();
      setInterval(tick, 1000);
      bindForms();
      connect();
    })();
    """#

    /// A round clock face: the tab's icon (browsers ask for one; a 404 is a console error).
    static let favicon = #"""
    <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><circle cx="16" cy="16" r="14" fill="#1f2d3d"/><path d="M16 7v9l6 4" stroke="#7bed9f" stroke-width="3" fill="none" stroke-linecap="round"/></svg>
    """#

    static let style = #"""
    :root { color-scheme: light; --ok: #2e9e44; --fail: #d43c3c; --exp: #f08c00; --crash: #8e44ad; --int: #7f8c8d; --run: #3b7dd8; }
    body { font: 14px/1.45 "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 0; color: #222; background: #f6f7f9; }
    body { overflow-wrap: break-word; }
    header { display: flex; flex-wrap: wrap; gap: .3em 1.5em; align-items: center; padding: .6em 1.2em; background: #1f2d3d; color: #fff; }
    header nav { display: flex; flex-wrap: wrap; gap: .3em 1em; }
    header a { color: #cfe3ff; text-decoration: none; }
    header a[aria-current] { color: #fff; font-weight: bold; border-bottom: 2px solid #fff; }
    #live { margin-left: auto; font-size: 12px; }
    #live.on { color: #7bed9f; } #live.off { color: #ffb3b3; font-weight: bold; }
    .banner { padding: .6em 1.2em; background: #fdecea; color: #8a1c1c; border-bottom: 2px solid var(--fail); font-weight: bold; }
    .banner[hidden] { display: none; }
    body.stream-down [data-countdown] { color: #999; }
    #messages { padding: 0 1.2em; }
    #messages:empty { display: none; }
    .message { display: flex; gap: 1em; align-items: flex-start; justify-content: space-between; margin: .6em 0 0; padding: .5em .8em; border-radius: 6px; border: 1px solid; }
    .message.ok { background: #eaf7ed; border-color: var(--ok); }
    .message.refused { background: #fdecea; border-color: var(--fail); }
    .dismiss { background: none; border: 0; font-size: 18px; line-height: 1; cursor: pointer; color: #444; text-decoration: none; padding: 0 .2em; }
    main { padding: 1em 1.2em; }
    footer { padding: 1em 1.2em; font-size: 12px; }
    h1 { margin: .2em 0 .6em; font-size: 22px; }
    h2 { font-size: 16px; margin: .2em 0 .5em; }
    section, article { background: #fff; border: 1px solid #e1e4e8; border-radius: 6px; padding: .8em 1em; margin-bottom: 1em; }
    .grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(420px, 100%), 1fr)); gap: 0 1em; }
    .grid > * { min-width: 0; }
    .table { overflow-x: auto; max-width: 100%; }
    table { border-collapse: collapse; width: 100%; }
    th, td { text-align: left; padding: .3em .5em; border-bottom: 1px solid #eef0f2; vertical-align: top; }
    th { font-size: 12px; color: #57606f; font-weight: normal; }
    .muted { color: #778; }
    h3 { font-size: 15px; margin: .1em 0 .4em; }
    h2 .muted, h3 .muted { font-weight: normal; font-size: 13px; }
    .outcome { display: inline-block; padding: 0 .45em; border-radius: 3px; color: #fff; font-size: 12px; }
    .outcome.success { background: var(--ok); } .outcome.failure { background: var(--fail); }
    .outcome.expired { background: var(--exp); } .outcome.crashed { background: var(--crash); }
    .outcome.interrupted { background: var(--int); } .outcome.running { background: var(--run); }
    .outcome.paused { background: #5b5b66; }
    .counts { display: flex; gap: 1em; flex-wrap: wrap; margin-bottom: .6em; }
    .count { border-left: 5px solid #ccc; padding: .2em .7em; background: #fafbfc; }
    .count .n { font-size: 20px; font-weight: bold; }
    .count.success { border-color: var(--ok); } .count.failure { border-color: var(--fail); }
    .count.expired { border-color: var(--exp); } .count.crashed { border-color: var(--crash); }
    .count.interrupted { border-color: var(--int); } .count.running { border-color: var(--run); }
    .picture { max-width: 100%; height: auto; border: 1px solid #eee; }
    .why { font-size: 12px; color: #444; max-width: 40em; }
    .events { font: 12px/1.4 "DejaVu Sans Mono", monospace; max-height: 16em; overflow: auto; padding-left: 1.5em; }
    .event.finished, .event.launched { color: #1f2d3d; }
    pre { background: #f3f4f6; padding: .5em; overflow: auto; max-height: 20em; font-size: 12px; }
    meter { width: 14em; max-width: 100%; }
    svg.chart { max-width: 100%; height: auto; }
    input { max-width: 100%; box-sizing: border-box; }
    .actions { display: flex; flex-wrap: wrap; gap: .6em; }
    form.action { display: inline; }
    .widget-body { display: flex; gap: 1.2em; flex-wrap: wrap; }
    .widget-body > div { min-width: 0; max-width: 100%; }
    .rendition { width: 320px; max-width: 100%; height: auto; border: 1px solid #ddd; border-radius: 4px; }
    .timeline { font-size: 12px; }
    code { font-size: 12px; word-break: break-all; }
    .wide { grid-column: 1 / -1; }
    form.simulate label, form.action label { margin-right: .8em; }
    form.search { display: flex; flex-wrap: wrap; gap: .4em .8em; align-items: center; margin: 0 0 .6em; }
    form.search label { display: inline-flex; gap: .3em; align-items: center; max-width: 100%; }
    select { max-width: 100%; }
    .pager { display: flex; flex-wrap: wrap; gap: .4em 1em; align-items: center; margin: .3em 0 .6em; }
    .pager .position { font-weight: bold; }
    pre.report { max-height: 40em; }
    ul.gone { font-size: 12px; }
    @media (max-width: 600px) {
      header, main, footer { padding-left: .6em; padding-right: .6em; }
      #messages { padding: 0 .6em; }
      section, article { padding: .6em; }
      .why { min-width: 14em; }
    }
    """#
}
