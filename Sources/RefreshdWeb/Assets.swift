/// The dashboard's script and style sheet, served as files (`/static/...`): the
/// Content-Security-Policy allows scripts and styles from the dashboard's own origin only, so
/// there is no inline script or style anywhere.
enum Assets {
    /// Live updates: an EventSource on `/api/events` (the runtime's observations); each event is
    /// listed, and `<main>` is fetched again (at most every 250 ms) and swapped in, so a page
    /// shows what the server renders, without a reload and without a second renderer here.
    /// Countdowns tick every second. Action forms are sent with `fetch` and the token kept in
    /// `sessionStorage` (asked once; never a cookie).
    static let script = #"""
    "use strict";
    (function () {
      var main = document.getElementById("main");
      var live = document.getElementById("live");
      var pending = null, busy = false, again = false;
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
        var times = document.querySelectorAll("[data-countdown]");
        for (var i = 0; i < times.length; i++) {
          var ms = parseInt(times[i].getAttribute("data-countdown"), 10);
          if (!isNaN(ms)) times[i].textContent = relative(ms);
        }
      }
      function refresh() {
        if (busy) { again = true; return; }
        busy = true;
        fetch(location.pathname + location.search, { headers: { "Accept": "text/html" }, cache: "no-store" })
          .then(function (r) { return r.ok ? r.text() : null; })
          .then(function (text) {
            if (!text) return;
            var doc = new DOMParser().parseFromString(text, "text/html");
            var fresh = doc.getElementById("main");
            if (!fresh) return;
            // The events listed so far stay: the fresh page's empty list is replaced by them.
            var events = document.getElementById("events");
            var freshEvents = fresh.querySelector("#events");
            if (events && freshEvents) freshEvents.replaceWith(events);
            main.replaceChildren.apply(main, Array.prototype.slice.call(fresh.childNodes));
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
      function connect() {
        if (!window.EventSource) return;
        var source = new EventSource("/api/events");
        source.addEventListener("open", function () { live.textContent = "live"; live.className = "on"; });
        source.addEventListener("error", function () { live.textContent = "reconnecting"; live.className = "muted"; });
        source.addEventListener("observation", function (e) {
          var o = null;
          try { o = JSON.parse(e.data); } catch (x) { return; }
          listEvent(o);
          if (o.kind !== "output") schedule();
        });
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
            var form = e.currentTarget, t = token();
            if (!t) return;
            // A form with fields (adding an instance) sends them in the query string.
            var url = form.getAttribute("action"), fields = new URLSearchParams(new FormData(form)).toString();
            if (fields) url += "?" + fields;
            fetch(url, { method: "POST", headers: { "Authorization": "Bearer " + t }, cache: "no-store" })
              .then(function (r) {
                if (r.status === 401 || r.status === 403) sessionStorage.removeItem("refreshd-token");
                return r.json().then(function (body) { return { status: r.status, body: body }; });
              })
              .then(function (res) {
                var out = document.getElementById("action-result");
                var text = res.body.ok ? (res.body.message || "done") : ((res.body.error && res.body.error.message) || ("refused: " + res.status));
                if (out) out.textContent = text; else listEvent({ kind: "action", message: text });
                schedule();
              })
              .catch(function () {});
          });
        }
      }
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
    header { display: flex; gap: 1.5em; align-items: center; padding: .6em 1.2em; background: #1f2d3d; color: #fff; }
    header a { color: #cfe3ff; margin-right: 1em; text-decoration: none; }
    header a[aria-current] { color: #fff; font-weight: bold; border-bottom: 2px solid #fff; }
    #live { margin-left: auto; font-size: 12px; }
    #live.on { color: #7bed9f; }
    main { padding: 1em 1.2em; }
    footer { padding: 1em 1.2em; font-size: 12px; }
    h1 { margin: .2em 0 .6em; font-size: 22px; }
    h2 { font-size: 16px; margin: .2em 0 .5em; }
    section, article { background: #fff; border: 1px solid #e1e4e8; border-radius: 6px; padding: .8em 1em; margin-bottom: 1em; }
    .grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 0 1em; }
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
    meter { width: 14em; }
    .actions { display: flex; gap: .6em; }
    form.action { display: inline; }
    .widget-body { display: flex; gap: 1.2em; flex-wrap: wrap; }
    .rendition { width: 320px; max-width: 100%; height: auto; border: 1px solid #ddd; border-radius: 4px; }
    .timeline { font-size: 12px; }
    code { font-size: 12px; word-break: break-all; }
    .wide { grid-column: 1 / -1; }
    form.simulate label, form.action label { margin-right: .8em; }
    pre.report { max-height: 40em; }
    ul.gone { font-size: 12px; }
    """#
}
