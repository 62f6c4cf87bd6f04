// hotbench report: draws the charts declared in #hotbench-data with uPlot, then reports on
// <pre id="status"> and <html data-ready>: "ready charts=N drawn=N empty=0 errors=0".
(function () {
  "use strict";
  var errors = [];
  window.addEventListener("error", function (e) { errors.push(String(e.message)); });
  var origError = console.error;
  console.error = function () {
    errors.push(Array.prototype.map.call(arguments, String).join(" "));
    return origError.apply(console, arguments);
  };
  var palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
                 "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939"];

  function pctLabel(v) {
    // x = 1/(1-q): 10 -> 90%, 100 -> 99%, 1000 -> 99.9%.
    if (v <= 1) return "0%";
    var q = (1 - 1 / v) * 100;
    var digits = Math.max(0, Math.ceil(Math.log10(v)) - 2);
    return q.toFixed(digits) + "%";
  }

  function fmt(v) {
    if (v == null || !isFinite(v)) return "–";
    var a = Math.abs(v);
    if (a >= 1000) return v.toFixed(0);
    if (a >= 100) return v.toFixed(1);
    if (a >= 1) return v.toFixed(2);
    return v.toPrecision(3);
  }

  function hasData(spec) {
    return spec.x.length > 0 && spec.series.some(function (s) {
      return s.values.some(function (v) { return v != null && isFinite(v); });
    });
  }

  // A perturbation's action shaded behind the series (at least 3 px wide), clipped to the
  // plot; its TTR points as dashed vertical lines over them, labelled at the top.
  function xPos(u, v) {
    var sx = u.scales.x;
    if (v == null || !isFinite(v) || v < sx.min || v > sx.max) return null;
    return u.valToPos(v, "x", true);
  }

  function drawBands(u, spec) {
    if (!spec.bands) return;
    var ctx = u.ctx, b = u.bbox;
    ctx.save();
    ctx.fillStyle = "rgba(255, 140, 0, 0.18)";
    spec.bands.forEach(function (band) {
      var sx = u.scales.x;
      var from = Math.max(band.from, sx.min), to = Math.min(band.to, sx.max);
      if (!(to >= from)) return;
      var x0 = u.valToPos(from, "x", true), x1 = u.valToPos(to, "x", true);
      if (x1 - x0 < 3) x1 = x0 + 3;
      ctx.fillRect(x0, b.top, x1 - x0, b.height);
    });
    ctx.restore();
  }

  function drawMarks(u, spec) {
    if (!spec.marks) return;
    var ctx = u.ctx, b = u.bbox, px = window.devicePixelRatio || 1;
    ctx.save();
    ctx.strokeStyle = "#444";
    ctx.fillStyle = "#444";
    ctx.lineWidth = px;
    ctx.setLineDash([4 * px, 3 * px]);
    ctx.font = (10 * px) + "px sans-serif";
    spec.marks.forEach(function (m, i) {
      var x = xPos(u, m.x);
      if (x == null) return;
      ctx.beginPath();
      ctx.moveTo(x, b.top);
      ctx.lineTo(x, b.top + b.height);
      ctx.stroke();
      // Staggered so neighbouring labels do not overprint each other.
      ctx.fillText(String(m.label), x + 3 * px, b.top + (11 + 11 * (i % 2)) * px);
    });
    ctx.restore();
  }

  function build(spec, el, onDrawn) {
    var raw = spec.series.map(function (s) { return s.values; });
    var shown = raw;
    if (spec.stacked) {
      // Cumulative sums, drawn top-down so each band covers the ones above it.
      var acc = spec.x.map(function () { return 0; });
      var cum = raw.map(function (vals) {
        return vals.map(function (v, i) { acc[i] += (v || 0); return acc[i]; });
      });
      shown = cum.slice().reverse();
    }
    var order = spec.stacked ? raw.map(function (_, i) { return raw.length - 1 - i; })
                             : raw.map(function (_, i) { return i; });
    // Legend values only under the cursor: a static legend names the series (no "s: –").
    var xLabel = spec.x_kind === "time" ? "time (" + spec.x_label + ")" : spec.x_label;
    var series = [{ label: xLabel,
                    value: spec.x_kind === "quantile" ? function (u, v) { return v == null ? "" : pctLabel(v); }
                                                      : function (u, v) { return v == null ? "" : fmt(v); } }];
    order.forEach(function (idx) {
      var s = spec.series[idx];
      // A fixed colour (wait events keep theirs on every chart), else by position.
      var color = s.color || palette[idx % palette.length];
      var def = {
        label: s.label,
        stroke: color,
        width: 1.5,
        value: function (u, v, sidx, di) {
          if (di == null) return "";
          var r = raw[idx][di];
          return r == null ? "–" : fmt(r);
        },
        spanGaps: !spec.stacked
      };
      if (spec.stacked) { def.fill = color + "cc"; def.width = 0.5; }
      if (s.dashed) { def.dash = [6, 4]; def.points = { show: false }; }
      if (s.points) { def.paths = function () { return null; }; def.points = { show: true, size: 8, fill: color }; }
      series.push(def);
    });
    var xScale = { time: false };
    if (spec.x_kind === "quantile") { xScale.distr = 3; xScale.log = 10; }
    var yScale = {};
    if (spec.y_log) { yScale.distr = 3; yScale.log = 10; }
    else { yScale.range = function (u, min, max) { return [Math.min(0, min), max > 0 ? max * 1.05 : 1]; }; }
    var xAxis = { label: spec.x_label };
    if (spec.x_kind === "quantile") {
      // Ticks at 0%, 90%, 99%, 99.9% …: x = 1, 10, 100, 1000 …
      xAxis.splits = function (u) {
        var max = u.scales.x.max || 10, out = [1];
        for (var v = 10; v <= max * 1.0001; v *= 10) out.push(v);
        return out;
      };
      xAxis.values = function (u, splits) { return splits.map(pctLabel); };
    }
    var width = Math.max(320, Math.min(1100, (el.parentNode.clientWidth || 900) - 10));
    var opts = {
      title: spec.title,
      width: width,
      height: 260,
      scales: { x: xScale, y: yScale },
      axes: [xAxis, { label: spec.y_label, size: 60 }],
      series: series,
      legend: { live: true },
      // Without a cursor the legend only names the series: the x entry is hidden (hb-idle).
      hooks: {
        drawClear: [function (u) { drawBands(u, spec); }],
        draw: [function (u) { drawMarks(u, spec); onDrawn(); }],
        ready: [function (u) { u.root.classList.add("hb-idle"); }],
        setLegend: [function (u) { u.root.classList.toggle("hb-idle", u.cursor.idx == null); }]
      }
    };
    return new uPlot(opts, [spec.x].concat(shown), el);
  }

  function main() {
    var status = document.getElementById("status");
    var specs = [];
    try {
      specs = JSON.parse(document.getElementById("hotbench-data").textContent);
    } catch (e) {
      errors.push("data: " + e.message);
    }
    var drawn = {};
    var empty = 0;
    function report() {
      var n = Object.keys(drawn).length;
      var text = (n === specs.length - empty ? "ready" : "drawing") +
        " charts=" + specs.length + " drawn=" + n + " empty=" + empty + " errors=" + errors.length;
      if (errors.length) text += "\n" + errors.join("\n");
      status.textContent = text;
      document.documentElement.setAttribute("data-ready", n === specs.length - empty && errors.length === 0 ? "yes" : "no");
    }
    specs.forEach(function (spec, i) {
      var el = document.getElementById("chart" + i);
      if (!el) { errors.push("missing element for chart " + i); return; }
      if (!hasData(spec)) { empty++; return; }
      try {
        build(spec, el, function () { drawn[i] = true; report(); });
      } catch (e) {
        errors.push("chart " + i + " (" + spec.title + "): " + e.message);
      }
    });
    report();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", main);
  else main();
})();
