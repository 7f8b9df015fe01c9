// Small behaviours of the dashboard; every page works without them.
(function () {
  "use strict";

  function slugify(text) {
    return text.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase()
      .replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 64);
  }

  // Without the clipboard API: copy the selected text, and leave it selected so that Ctrl+C
  // works where even that is refused.
  function copyBySelecting(text, done) {
    var holder = document.createElement("span");
    holder.textContent = text;
    holder.style.position = "fixed";
    holder.style.opacity = "0";
    document.body.appendChild(holder);
    var range = document.createRange();
    range.selectNodeContents(holder);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    try { document.execCommand("copy"); } catch (refused) { /* the text stays selected */ }
    done();
  }

  document.addEventListener("click", function (event) {
    var toggle = event.target.closest("[aria-controls][aria-expanded]");
    if (toggle) {  // the menu button of a narrow screen: shows or hides the sections
      var open = toggle.getAttribute("aria-expanded") !== "true";
      toggle.setAttribute("aria-expanded", String(open));
      document.getElementById(toggle.getAttribute("aria-controls")).classList.toggle("open", open);
      return;
    }
    var copy = event.target.closest("[data-copy]");
    if (copy) {
      var done = function () {
        var label = copy.textContent;
        copy.textContent = copy.dataset.copied;
        setTimeout(function () { copy.textContent = label; }, 1500);
      };
      if (navigator.clipboard) {
        navigator.clipboard.writeText(copy.dataset.copy).then(done, function () {
          copyBySelecting(copy.dataset.copy, done);
        });
      } else {
        copyBySelecting(copy.dataset.copy, done);  // plain HTTP on an address other than localhost
      }
      return;
    }
    var insert = event.target.closest("[data-insert]");
    if (insert) {
      var input = document.getElementById(insert.dataset.target);
      var at = input.selectionStart === null ? input.value.length : input.selectionStart;
      input.value = input.value.slice(0, at) + insert.dataset.insert + input.value.slice(input.selectionEnd || at);
      input.focus();
      input.setSelectionRange(at + insert.dataset.insert.length, at + insert.dataset.insert.length);
      input.dispatchEvent(new Event("input", { bubbles: true }));
      return;
    }
    document.querySelectorAll("details.dropdown[open]").forEach(function (details) {
      if (!details.contains(event.target)) { details.removeAttribute("open"); }
    });
  });

  // On a phone the filters start folded, unless the page is already filtered.
  if (window.matchMedia("(max-width: 767.98px)").matches && !window.location.search) {
    document.querySelectorAll("details.filter-box[open]").forEach(function (details) {
      details.removeAttribute("open");
    });
  }

  document.addEventListener("submit", function (event) {
    var message = event.target.dataset && event.target.dataset.confirm;
    if (message && !window.confirm(message)) { event.preventDefault(); }
  }, true);

  document.addEventListener("input", function (event) {
    if (!event.target.matches("[data-slug-source]")) { return; }
    var slug = document.querySelector("[data-slug-target]");
    if (slug && (!slug.value || slug.dataset.auto === "1")) {
      slug.value = slugify(event.target.value).slice(0, slug.maxLength > 0 ? slug.maxLength : 64);
      slug.dataset.auto = "1";
    }
  });
  document.addEventListener("input", function (event) {
    if (event.target.matches("[data-slug-target]") && event.isTrusted) { event.target.dataset.auto = "0"; }
  });
})();

// The home screen's and the report's charts: clicks and sales (left axis) and net revenue
// (right), day by day.
(function () {
  "use strict";
  function draw(name) {
    var holder = document.getElementById(name);
    var source = document.getElementById(name + "-data");
    if (!holder || !source || !window.uPlot) { return; }
    var data = JSON.parse(source.textContent);
    var labels = JSON.parse(holder.dataset.labels);
    var days = data.days.map(function (day) { return Date.parse(day + "T00:00:00Z") / 1000; });
    var locale = document.documentElement.lang || "pt-BR";
    var dayText = function (seconds) {
      return new Date(seconds * 1000).toLocaleDateString(locale, { day: "2-digit", month: "2-digit", timeZone: "UTC" });
    };
    var count = new Intl.NumberFormat(locale);
    var money = new Intl.NumberFormat(locale, { style: "currency", currency: data.currency || "BRL" });
    var shown = function (format) {
      return function (u, value) { return value == null ? "" : format(value); };
    };
    // Without a pointer over it (always, on a phone) the legend shows the last day's values.
    var last = days.length - 1;
    var showLast = function (u) {
      if (u.cursor.idx == null && last >= 0) { u.setLegend({ idx: last }); }
    };
    var options = {
      width: Math.max(holder.clientWidth, 280),
      height: 240,
      series: [
        { label: labels.day, value: shown(dayText) },
        { label: labels.clicks, stroke: "#6b7c93", width: 2, value: shown(count.format) },
        { label: labels.sales, stroke: "#00895a", width: 2, value: shown(count.format) },
        { label: labels.revenue, stroke: "#1d4f91", width: 2, scale: "money", value: shown(money.format) }
      ],
      axes: [
        // Whole days only: a short period would otherwise get a tick every 12 hours, each day twice.
        { incrs: [86400, 2 * 86400, 7 * 86400, 14 * 86400, 28 * 86400], values: function (u, ticks) { return ticks.map(dayText); } },
        {},
        { scale: "money", side: 1, grid: { show: false } }
      ],
      hooks: { setCursor: [showLast] }
    };
    holder.textContent = "";
    var chart = new window.uPlot(options, [days, data.clicks, data.sales, data.revenue], holder);
    showLast(chart);
    window.addEventListener("resize", function () {
      chart.setSize({ width: Math.max(holder.clientWidth, 280), height: 240 });
    });
    holder.dataset.drawn = "true";
  }
  function drawAll() { ["home-chart", "report-chart"].forEach(draw); }
  if (document.readyState === "complete") { drawAll(); } else { window.addEventListener("load", drawAll); }
})();
