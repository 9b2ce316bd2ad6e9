/* Comparison tables (evreg.compare): sort within each workload, filter, download the rows shown as CSV.
   Local and self-contained: no library, no network. Without it the page is the plain table. */
(function () {
  "use strict";

  function text(el) { return (el.textContent || "").replace(/\s+/g, " ").trim(); }

  function key(td) { return td.hasAttribute("data-key") && td.getAttribute("data-key") !== "" ? td.getAttribute("data-key") : text(td); }

  /* One rule for a CSV cell, as evreg.core.tabular.csv_cell writes it: a cell a spreadsheet would read as a
     formula (=, +, -, @ first, after any blanks or controls) gets a leading ', unless it is a plain number. */
  var CSV_FORMULA = /^[\s\x00-\x1f\u00a0\u2000-\u200b\ufeff]*[=+\-@\uff1d\uff0b\uff0d\uff20]/;
  var CSV_NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

  function csvCell(value) {
    var v = value == null ? "" : String(value);
    return CSV_FORMULA.test(v) && !CSV_NUMBER.test(v) ? "'" + v : v;
  }

  function csvField(value) {
    var v = csvCell(value);
    return /[",\r\n]/.test(v) ? '"' + v.replace(/"/g, '""') + '"' : v;
  }

  function setup(table) {
    var controls = table.closest(".evreg-scroll").previousElementSibling;
    if (!controls || !controls.classList.contains("evreg-compare-controls")) return;
    var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
    var bodies = Array.prototype.slice.call(table.tBodies);
    var rows = table.querySelectorAll("tr.evreg-row");
    var selects = [];
    var textBox = controls.querySelector(".evreg-filter-text");
    var rankedOnly = controls.querySelector(".evreg-ranked-only");
    var shown = controls.querySelector(".evreg-shown");

    heads.forEach(function (th, col) {
      if (th.getAttribute("data-filter")) {
        var values = {};
        rows.forEach(function (tr) { values[key(tr.cells[col])] = true; });
        var select = document.createElement("select");
        select.setAttribute("data-col", col);
        select.setAttribute("aria-label", "Filter by " + text(th));
        select.appendChild(new Option("All: " + text(th), ""));
        Object.keys(values).sort().forEach(function (v) { select.appendChild(new Option(v, v)); });
        select.addEventListener("change", apply);
        controls.querySelector(".evreg-filter-selects").appendChild(select);
        selects.push(select);
      }
      var button = document.createElement("button");
      button.type = "button";
      button.className = "evreg-sort";
      button.textContent = text(th);
      button.setAttribute("aria-label", "Sort by " + text(th) + " within each workload");
      button.addEventListener("click", function () { sort(col, th); });
      th.textContent = "";
      th.appendChild(button);
    });

    function sort(col, th) {
      var ascending = th.getAttribute("aria-sort") !== "ascending";
      heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      bodies.forEach(function (body) {
        var list = Array.prototype.slice.call(body.querySelectorAll("tr.evreg-row"));
        list.sort(function (a, b) {
          var x = a.cells[col], y = b.cells[col];
          var sx = x.getAttribute("data-sort"), sy = y.getAttribute("data-sort");
          var cmp;
          if (sx !== null || sy !== null) {  // numeric; rows without a number (not ranked) go last either way
            if (sx === null) return 1;
            if (sy === null) return -1;
            cmp = parseFloat(sx) - parseFloat(sy);
          } else {
            cmp = key(x).localeCompare(key(y));
          }
          return ascending ? cmp : -cmp;
        });
        list.forEach(function (tr) { body.appendChild(tr); });  // the workload's heading row stays first
      });
    }

    function apply() {
      var needle = textBox.value.trim().toLowerCase();
      var count = 0;
      bodies.forEach(function (body) {
        var visible = 0;
        body.querySelectorAll("tr.evreg-row").forEach(function (tr) {
          var ok = !(rankedOnly.checked && tr.classList.contains("evreg-unranked"));
          selects.forEach(function (s) {
            if (ok && s.value && key(tr.cells[+s.getAttribute("data-col")]) !== s.value) ok = false;
          });
          if (ok && needle) ok = (text(tr) + " " + text(body.rows[0])).toLowerCase().indexOf(needle) >= 0;
          tr.hidden = !ok;
          if (ok) visible += 1;
        });
        body.hidden = visible === 0;
        count += visible;
      });
      shown.textContent = count + " of " + rows.length + " rows shown" + (table.getAttribute("data-rows-missing") ?
        " (the rows in the page only: this browser could not read the other rows' data file)" : "");
    }

    function download() {
      var names = ["workload"].concat(heads.map(function (th) { return text(th); }), ["measurement", "url"]);
      var lines = [names.map(csvField).join(",")];
      bodies.forEach(function (body) {
        if (body.hidden) return;
        var tier = body.getAttribute("data-tier") || "";
        body.querySelectorAll("tr.evreg-row").forEach(function (tr) {
          if (tr.hidden) return;
          var cells = Array.prototype.map.call(tr.cells, function (td) { return text(td); });
          var link = tr.querySelector("a.evreg-cite");
          var fields = [tier].concat(cells, [tr.getAttribute("data-measurement") || "", link ? link.href : ""]);
          lines.push(fields.map(csvField).join(","));
        });
      });
      var blob = new Blob([lines.join("\r\n") + "\r\n"], { type: "text/csv;charset=utf-8" });
      var a = document.createElement("a");
      a.href = URL.createObjectURL(blob);
      a.download = (controls.getAttribute("data-metric") || "comparison") + ".csv";
      document.body.appendChild(a);
      a.click();
      setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 0);
    }

    textBox.addEventListener("input", apply);
    rankedOnly.addEventListener("change", apply);
    controls.querySelector(".evreg-download").addEventListener("click", download);
    controls.hidden = false;
    apply();
  }

  var MID = "\u0001", BASE = "\u0002", HOME = "\u0003", NUMBER = "\u0004";  // in the data file (evreg.compare.Rows):
  // a row's measurement id, the page's base, the row's measurement's page, a number of its value cell's template

  function filled(template, numbers) {
    return template.split(NUMBER).map(function (part, i) { return part + (i < numbers.length ? numbers[i] : ""); }).join("");
  }

  function escapeHtml(s) {
    return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;").replace(/'/g, "&#x27;");
  }

  function addRows(table, data) {
    data.tiers.forEach(function (rows, n) {
      var body = table.tBodies[n];
      if (!body || !rows.length) return;
      var html = rows.map(function (r) {
        var cells = r[7].map(function (i) { return data.cells[i]; });
        cells.splice(1, 0, filled(data.cells[r[5]], r[6]).split(MID).join(r[0]));
        var tds = cells.join("").split(HOME).join(r[1]).split(BASE).join(data.base);
        return '<tr class="evreg-row evreg-' + r[2] + '" data-measurement="' + escapeHtml(r[0]) + '" data-low="' +
          r[3] + '" data-high="' + r[4] + '">' + tds + "</tr>";
      });
      body.insertAdjacentHTML("beforeend", html.join(""));
    });
  }

  function load(table) {  // the rows past those in the page, from the page's data file; then the controls
    var src = table.getAttribute("data-rows");
    if (src && !window.fetch) table.setAttribute("data-rows-missing", "1");
    if (!src || !window.fetch) { setup(table); return; }
    fetch(src).then(function (r) { if (!r.ok) throw new Error(String(r.status)); return r.arrayBuffer(); })
      .then(function (buf) {  // gzip as stored; a server that decoded it on the way (Content-Encoding) sent JSON
        var head = new Uint8Array(buf, 0, Math.min(2, buf.byteLength));
        if (head[0] !== 0x1f || head[1] !== 0x8b) return JSON.parse(new TextDecoder().decode(buf));
        var plain = new Blob([buf]).stream().pipeThrough(new DecompressionStream("gzip"));
        return new Response(plain).json();
      })
      .then(function (data) { addRows(table, data); }, function () {  // offline (file:), or no
        table.setAttribute("data-rows-missing", "1");  // DecompressionStream in an old browser: the rows in the page,
      })  // and the count says so
      .then(function () { setup(table); });
  }

  function init() { document.querySelectorAll("table.evreg-compare").forEach(load); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
