// The embedded patching explorer (ssm_mech.explorer.Explorer.render_embedded): redraws the views of a page's
// precomputed snapshot (the JSON in script.ssm-explorer-data) on every change of the controls, without a kernel.
(function () {
  var root = document.getElementById("__ID__");
  if (!root || root.getAttribute("data-ready")) return;
  root.setAttribute("data-ready", "1");
  var D = JSON.parse(root.querySelector("script.ssm-explorer-data").textContent), S = {};
  for (var k in D.initial) S[k] = D.initial[k];
  var q = function (sel) { return root.querySelector(sel); };
  var esc = function (s) { return String(s).replace(/[&<>"']/g, function (c) { return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;"}[c]; }); };
  var fmt = function (v, d) { return v === null ? "nan" : (+v.toFixed(d) === 0 ? 0 : v).toFixed(d); };   // no "-0.00"
  var colour = function (v) { return v === null ? "#e0e0e0" : D.palette[Math.round((Math.max(-1, Math.min(1, v)) + 1) * 50)]; };
  var ink = function (v) { return v !== null && Math.abs(v) > 0.6 ? "white" : "black"; };
  var point = function (h) { return h.replace(/^blocks\.\d+\./, ""); };
  var est = function () { return S.method === "estimated"; };
  var rest = function (R, O, C) { return R === null || Math.abs(O - C) <= 1e-3 ? null : (R - C) / (O - C); };   // as _restoration
  function setLayer(l) {   // as the live slider: keep the point type where the new layer has it
    var h = "blocks." + l + "." + point(S.hook);
    S.hook = D.hooks[l].indexOf(h) >= 0 ? h : D.hooks[l][0]; S.layer = l;
  }
  function render() {
    var cm = S.corruption + "|" + S.method, e = String(S.example), X = D.examples[e];
    var at = X.index[S.position], pt = point(S.hook), O = X.O[S.corruption], C = X.C[S.corruption];
    var named = D.named[cm][S.hook], R = D.site[cm][S.hook][S.position][e], assoc = named[D.named_positions.indexOf(S.position)];
    root.querySelectorAll("button[data-control]").forEach(function (b) {
      var on = String(S[b.getAttribute("data-control")]) === b.getAttribute("data-value");
      b.setAttribute("aria-pressed", on ? "true" : "false");
      b.style.background = on ? "#2780e3" : "#f8f9fa"; b.style.color = on ? "white" : "#212529";
    });
    var hs = q('[data-control="hook"]');
    hs.innerHTML = D.hooks[S.layer].map(function (h) { return '<option value="' + esc(h) + '">' + esc(point(h)) + "</option>"; }).join("");
    hs.value = S.hook; q('[data-control="example"]').value = e; q('[data-control="position"]').value = S.position;
    q('[data-control="layer"]').value = S.layer; q(".sx-layer").textContent = S.layer;
    var warn = est() ? D.warnings[S.corruption] : null;   // a case where the estimate is known to fail (KNOWN_ESTIMATE_FAILURES)
    q(".sx-warning").style.display = warn ? "block" : "none"; q(".sx-warning").innerHTML = warn ? "<b>⚠ Estimate known to fail here.</b> " + esc(warn) : "";
    q(".sx-header").innerHTML = "<b>" + esc(D.title) + "</b> &nbsp; example " + e + ", answer <code>" + esc(X.answer) + "</code>, " +
      S.corruption + " corrupted; patch <code>" + esc(S.hook) + "</code> at " + esc(S.position) + " (#" + at + "): O=" + fmt(O, 3) +
      " C=" + fmt(C, 3) + " R" + (est() ? "≈" : "=") + fmt(R, 3) + "; association over " + D.n + " examples " +
      (est() ? "≈ " : "= ") + fmt(assoc, 2);
    var st = D.strip[cm][S.hook];
    q(".sx-strip").innerHTML = '<div style="font-family:monospace;line-height:2.1">' + X.tokens.map(function (t, p) {
      var v = rest(st.R[e][p], O, C), role = X.roles[p];
      var tip = "#" + p + " " + t + " " + role + ": R=" + fmt(st.R[e][p], 3) + ", restoration=" + fmt(v, 2) +
                " (this example); association over all examples=" + fmt(st.association[p], 2);
      return '<span title="' + esc(tip) + '" style="background:' + colour(v) + ";color:" + ink(v) + ";border:" +
             (p === at ? "2px solid black" : "1px solid transparent") + ';padding:1px 4px;border-radius:3px">' + esc(t) +
             (role ? "<sub>" + esc(role) + "</sub>" : "") + "</span>";
    }).join(" ") + "</div>";
    q(".sx-legend").innerHTML = "<small>colour: " + (est() ? "estimated " : "") + "restoration (R−C)/(O−C) of this example when <code>" + esc(pt) +
      "</code> is patched at that token (red 1, white 0, blue −1, grey: corruption has no effect). Association over all examples at the named positions: " +
      D.named_positions.map(function (p, j) { return p + "=" + fmt(named[j], 2); }).join(" ") + "</small>";
    var h = '<table class="sx-grid" style="border-collapse:collapse;font-size:.8rem;margin:0"><caption style="caption-side:top;font-size:.85rem;color:#333">' +
      (est() ? "estimated " : "") + "association, " + esc(pt) + " (" + S.corruption + " corrupted)</caption><tr><th></th>" +
      D.named_positions.map(function (p) { return '<th style="text-align:center;font-weight:normal">' + p + "</th>"; }).join("") + "</tr>";
    D.grid[cm][pt].forEach(function (row, l) {
      h += '<tr><th style="font-weight:normal;white-space:nowrap">layer ' + l + "</th>" + row.map(function (v, j) {
        var p = D.named_positions[j], on = l === S.layer && p === S.position;
        return '<td data-layer="' + l + '" data-position="' + p + '" style="background:' + colour(v) + ";color:" + ink(v) +
               ";text-align:center;min-width:3.4em;cursor:pointer;border:" + (on ? "2px solid black" : "1px solid white") + '">' +
               (v === null ? "" : fmt(v, 2)) + "</td>";
      }).join("") + "</tr>";
    });
    q(".sx-heatmap").innerHTML = h + "</table>";
    var A = D.answers[S.corruption], shown = A.patched[S.hook][S.position][e], runs = [["clean", "#595959"], ["corrupted", "#d62728"], ["patched", "#1f77b4"]];
    var b = '<table class="sx-answers" style="border-collapse:collapse;font-size:.78rem;margin:0"><caption style="caption-side:top;font-size:.85rem;color:#333;white-space:nowrap">' +
      "probability at the query: " + runs.map(function (r) { return '<span style="color:' + r[1] + '">■</span> ' + r[0]; }).join(" ") + "</caption>";
    shown[0].forEach(function (k, i) {
      var t = A.tokens[e][k], pr = {clean: A.clean[e][k] / 1000, corrupted: A.corrupted[e][k] / 1000, patched: shown[1][i] / 1000};
      b += '<tr><th style="text-align:right;font-weight:normal;white-space:nowrap;padding-right:.4rem">' + esc(t) + (t === X.answer ? " ←answer" : "") +
           '</th><td style="width:220px;padding:2px 0;text-align:left">' + runs.map(function (r) {
             return '<div title="' + r[0] + ": " + pr[r[0]].toFixed(3) + '" style="height:5px;margin:1px 0;background:' + r[1] + ";width:" +
                    (100 * pr[r[0]]).toFixed(1) + '%"></div>';
           }).join("") + "</td></tr>";
    });
    q(".sx-answers-view").innerHTML = b + "</table>";
  }
  root.addEventListener("click", function (ev) {
    var b = ev.target.closest("button[data-control]"), td = ev.target.closest("td[data-layer]");
    if (b) S[b.getAttribute("data-control")] = b.getAttribute("data-value");
    else if (td && D.positions.indexOf(td.getAttribute("data-position")) >= 0) { setLayer(+td.getAttribute("data-layer")); S.position = td.getAttribute("data-position"); }
    else return;
    render();
  });
  var onInput = function (ev) {
    var c = ev.target.getAttribute && ev.target.getAttribute("data-control");
    if (!c || ev.target.tagName === "BUTTON") return;
    if (c === "layer") setLayer(+ev.target.value); else if (c === "example") S.example = +ev.target.value; else S[c] = ev.target.value;
    render();
  };
  root.addEventListener("input", onInput); root.addEventListener("change", onInput);
  render();
})();
