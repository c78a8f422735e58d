(function () {
  "use strict";
  var body = document.body;
  function recordError(message) {
    window.reportErrors.push(String(message));
    body.dataset.jsErrors = window.reportErrors.join(" | ");
  }
  body.dataset.jsErrors = window.reportErrors.join(" | ");
  var canvases = Array.prototype.slice.call(document.querySelectorAll("canvas[data-kind]"));
  body.dataset.chartsExpected = String(canvases.length);
  body.dataset.chartsBuilt = "0";
  if (!canvases.length) return;
  if (typeof Chart === "undefined") { recordError("Chart.js did not load"); return; }
  var data = JSON.parse(document.getElementById("report-data").textContent);

  // ---- formatting ----
  function si(v, unit) {
    if (v === null || v === undefined || !isFinite(v)) return "n/a";
    var prefixes = ["", "k", "M", "G", "T", "P", "E"], k = 0, a = Math.abs(v);
    while (a >= 1000 && k < prefixes.length - 1) { a /= 1000; v /= 1000; k++; }
    return Number(v.toPrecision(3)) + " " + prefixes[k] + (unit || "");
  }
  // Also below one unit ("2.98 mJ"): joules per evaluation are mostly fractions of a joule.
  function siSmall(v, unit) {
    if (v === null || v === undefined || !isFinite(v)) return "n/a";
    var a = Math.abs(v), small = [[1e-3, "m"], [1e-6, "µ"], [1e-9, "n"]];
    for (var k = 0; a > 0 && a < 1 && k < small.length; k++) {
      if (a >= small[k][0]) return Number((v / small[k][0]).toPrecision(3)) + " " + small[k][1] + unit;
    }
    return si(v, unit);
  }
  function times(v) { return Number(v.toPrecision(3)) + "×"; }
  function size(n) {
    if (n >= 1048576 && n % 1048576 === 0) return n / 1048576 + "M";
    if (n >= 1024 && n % 1024 === 0) return n / 1024 + "K";
    return String(n);
  }
  function decadeTicks(unit) {
    return function (v) {
      var l = Math.log10(v);
      return Math.abs(l - Math.round(l)) < 1e-6 ? si(v, unit) : "";
    };
  }
  // Ticks at 1, 2 and 5 of each decade (log axes spanning less than a few decades).
  function oneTwoFive(format) {
    return function (v) {
      var m = v / Math.pow(10, Math.floor(Math.log10(v) + 1e-9));
      return [1, 2, 5].some(function (k) { return Math.abs(m - k) < 1e-6; }) ? format(v) : "";
    };
  }
  // Whole decades around the values, so no point sits on the plot's edge.
  function decades(values) {
    var finite = values.filter(function (v) { return v > 0 && isFinite(v); });
    var lo = Math.min.apply(null, finite), hi = Math.max.apply(null, finite);
    return { min: Math.pow(10, Math.floor(Math.log10(lo) - 0.05)),
             max: Math.pow(10, Math.ceil(Math.log10(hi) + 0.05)) };
  }
  function sizeTicks(sizes) {
    return function (axis) { axis.ticks = sizes.map(function (n) { return { value: n }; }); };
  }

  // ---- colours: CPU a blue family, GPU an orange-red family ----
  var palettes = {
    cpu: ["#1f5fbf", "#3d8ee6", "#0b7285", "#5c7cfa", "#15aabf", "#364fc7", "#74a9f0", "#1098ad"],
    gpu: ["#d9480f", "#f08c00", "#c2255c", "#e8590c", "#b35c00", "#fa5252", "#a61e4d", "#f59f00"]
  };
  var used = { cpu: {}, gpu: {} };
  function colour(device, name) {
    var family = palettes[device] || palettes.cpu, seen = used[device] || (used[device] = {});
    if (!(name in seen)) seen[name] = Object.keys(seen).length;
    return family[seen[name] % family.length];
  }
  function dash(series) {
    if (series.accuracy_class === "approximate") return [2, 3];
    if (series.precision === "f64") return [7, 4];
    return [];
  }

  Chart.defaults.font.family = getComputedStyle(body).fontFamily;
  Chart.defaults.font.size = 12;
  Chart.defaults.color = "#3a4456";
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.plugins.legend.position = "bottom";
  Chart.defaults.plugins.legend.labels.boxWidth = 14;
  Chart.defaults.plugins.legend.labels.boxHeight = 8;
  Chart.defaults.plugins.legend.labels.font = { size: 11 };
  Chart.defaults.plugins.tooltip.mode = "nearest";

  function axis(type, title, extra) {
    var a = { type: type, title: { display: true, text: title, font: { size: 12, weight: "600" } },
      grid: { color: "#edf0f4" } };
    for (var k in extra) a[k] = extra[k];
    return a;
  }

  // ---- drawing helpers (plugins) ----
  // Vertical error bars from each point's lo and hi.
  var errorBars = { id: "errorBars", afterDatasetsDraw: function (chart) {
    var ctx = chart.ctx;
    chart.data.datasets.forEach(function (ds, i) {
      if (!ds.errorBars || !chart.isDatasetVisible(i)) return;
      var meta = chart.getDatasetMeta(i), ys = chart.scales[meta.yAxisID];
      ctx.save();
      ctx.strokeStyle = ds.borderColor; ctx.lineWidth = 1.3; ctx.setLineDash([]);
      meta.data.forEach(function (el, j) {
        var p = ds.data[j];
        if (!p || p.lo == null || p.hi == null) return;
        var y1 = ys.getPixelForValue(p.lo), y2 = ys.getPixelForValue(p.hi);
        ctx.beginPath();
        ctx.moveTo(el.x, y1); ctx.lineTo(el.x, y2);
        ctx.moveTo(el.x - 4, y1); ctx.lineTo(el.x + 4, y1);
        ctx.moveTo(el.x - 4, y2); ctx.lineTo(el.x + 4, y2);
        ctx.stroke();
      });
      ctx.restore();
    });
  } };
  // Text beside points (ds.pointText(j)) or above bars (ds.textAbove). A label that would overlap
  // another tries other places around its point, further out each round, and is tied to its
  // point by a thin line when it had to move away.
  var labels = { id: "labels", afterDatasetsDraw: function (chart) {
    var ctx = chart.ctx, placed = [], area = chart.chartArea, h = 12;
    ctx.save();
    ctx.font = "11px " + Chart.defaults.font.family;
    function free(x, y, w) {
      if (x < area.left || x + w > area.right || y - h < area.top || y > area.bottom) return false;
      return !placed.some(function (b) {
        return x < b.x + b.w + 2 && b.x < x + w + 2 && y - h < b.y && b.y - h < y;
      });
    }
    chart.data.datasets.forEach(function (ds, i) {
      if (!ds.pointText || !chart.isDatasetVisible(i)) return;
      chart.getDatasetMeta(i).data.forEach(function (el) { placed.push({ x: el.x - 5, y: el.y + 5, w: 10 }); });
    });
    chart.data.datasets.forEach(function (ds, i) {
      if (!ds.pointText || !chart.isDatasetVisible(i)) return;
      chart.getDatasetMeta(i).data.forEach(function (el, j) {
        var text = ds.pointText(j);
        if (!text || el.skip) return;
        var w = ctx.measureText(text).width, x, y, moved = false;
        if (ds.textAbove) {
          x = el.x - w / 2; y = Math.min(el.y, el.base === undefined ? el.y : el.base) - 4;
        } else {
          var spots = [[8, 4], [-8 - w, 4], [8, -6], [-8 - w, -6], [8, 14], [-8 - w, 14]];
          for (var round = 0; round < 8 && x === undefined; round++) {
            for (var k = 0; k < spots.length; k++) {
              var dy = spots[k][1] + (spots[k][1] < 0 ? -1 : 1) * round * h;
              var cx = el.x + spots[k][0], cy = el.y + dy;
              if (free(cx, cy, w)) { x = cx; y = cy; moved = round > 0 || k > 1; break; }
            }
          }
          if (x === undefined) { x = el.x + 8; y = el.y + 4; }
        }
        if (moved) {
          ctx.strokeStyle = "#adb5bd"; ctx.lineWidth = 0.8;
          ctx.beginPath(); ctx.moveTo(el.x, el.y);
          ctx.lineTo(x < el.x ? x + w : x, y - h / 2 + 2); ctx.stroke();
        }
        placed.push({ x: x, y: y, w: w });
        ctx.fillStyle = "#1d2430";
        ctx.fillText(text, x, y);
      });
    });
    ctx.restore();
  } };
  Chart.register(errorBars, labels);

  function sortedSizes(points) {
    var seen = {};
    points.forEach(function (n) { seen[n] = true; });
    return Object.keys(seen).map(Number).sort(function (a, b) { return a - b; });
  }
  // Row labels in a smaller font on a phone, so the longest still fits beside its row.
  function rowFont(canvas) { return { size: canvas.parentNode.clientWidth < 480 ? 10 : 12 }; }
  function growPlot(canvas, rows, perRow, base) {
    canvas.parentNode.style.height = Math.max(base || 260, 90 + rows * perRow) + "px";
  }

  // ---- the charts ----
  var builders = {};

  // Within a device's family each formulation gets the next colour and the next marker, so no two
  // series of one chart share both.
  var markers = ["circle", "triangle", "rect", "rectRot", "star", "crossRot", "rectRounded", "cross"];
  builders.throughput = function (canvas, index) {
    var group = data.throughput[index].series, sizes = [], order = { cpu: 0, gpu: 0 };
    var datasets = group.map(function (s) {
      var k = order[s.device]++, family = palettes[s.device] || palettes.cpu;
      var c = family[k % family.length];
      s.points.forEach(function (p) { sizes.push(p.n); });
      return { label: s.name + (s.device === "gpu" ? " (GPU)" : " (CPU)"), series: s,
        data: s.points.map(function (p) { return { x: p.n, y: p.y, lo: p.lo, hi: p.hi, p: p }; }),
        borderColor: c, backgroundColor: c, borderWidth: 2,
        borderDash: s.accuracy_class === "approximate" ? [2, 3] : s.role === "naive_baseline" ? [7, 4] : [],
        pointStyle: markers[k % markers.length], pointRadius: 4.5, errorBars: true };
    });
    growPlot(canvas, Math.ceil(datasets.length / 3), 20, 380);
    var ys = [];
    group.forEach(function (s) { s.points.forEach(function (p) { ys.push(p.lo || p.y, p.hi || p.y); }); });
    var yb = decades(ys);
    return new Chart(canvas, { type: "line", data: { datasets: datasets }, options: {
      scales: {
        x: axis("logarithmic", "N (bodies)", { afterBuildTicks: sizeTicks(sortedSizes(sizes)),
          ticks: { callback: function (v) { return size(v); }, maxRotation: 0, autoSkip: true } }),
        y: axis("logarithmic", "interactions / s", { min: yb.min, max: yb.max,
          ticks: { callback: decadeTicks("") } }) },
      plugins: { legend: { labels: { usePointStyle: true } }, tooltip: { callbacks: { label: function (c) {
        var p = c.raw.p;
        var text = c.dataset.series.name + " at N = " + size(p.n) + ": " + si(p.y, "int/s") +
          " (CI " + si(p.lo) + "–" + si(p.hi) + ", " + Math.round(100 * p.conf) + "%)";
        if (p.noisy) text += " noisy";
        if (p.disturbed) text += " ⚠ " + p.disturbed;
        return text;
      } } } } } });
  };

  builders.ratio = function (canvas) {
    var sizes = [], datasets = [];
    ["f32", "f64"].forEach(function (precision) {
      ["best", "naive"].forEach(function (kind) {
        var points = [];
        data.ratios.forEach(function (r) {
          if (r.precision !== precision || !r[kind]) return;
          sizes.push(r.n);
          points.push({ x: r.n, y: r[kind].y, lo: r[kind].lo, hi: r[kind].hi, r: r[kind] });
        });
        if (!points.length) return;
        var c = kind === "best" ? "#7048e8" : "#2b8a3e";
        datasets.push({ label: kind + " / " + kind + " (" + precision + ")", data: points,
          borderColor: c, backgroundColor: c, borderDash: precision === "f64" ? [7, 4] : [],
          borderWidth: 2, pointRadius: 3.5, errorBars: true });
      });
    });
    var bounds = [];
    datasets.forEach(function (d) { d.data.forEach(function (p) { bounds.push(p.lo, p.hi); }); });
    var yb = decades(bounds);
    return new Chart(canvas, { type: "line", data: { datasets: datasets }, options: {
      scales: {
        x: axis("logarithmic", "N (bodies)", { afterBuildTicks: sizeTicks(sortedSizes(sizes)),
          ticks: { callback: function (v) { return size(v); }, maxRotation: 0 } }),
        y: axis("logarithmic", "GPU / CPU (×)", { min: yb.min, max: yb.max,
          ticks: { callback: oneTwoFive(times) } }) },
      plugins: { tooltip: { callbacks: { label: function (c) {
        var r = c.raw.r;
        return c.dataset.label + " at N = " + size(c.raw.x) + ": " + times(r.y) + " (" +
          times(r.lo) + "–" + times(r.hi) + "), " + r.gpu + " / " + r.cpu;
      } } } } } });
  };

  builders.ladder = function (canvas, index) {
    var l = data.ladders[index];
    var c = l.device === "gpu" ? "#e8590c" : "#1f5fbf";
    var steps = l.steps;
    return new Chart(canvas, { type: "bar", data: {
      labels: steps.map(function (s) { return s.name; }),
      datasets: [{ label: "speedup over " + steps[0].name, data: steps.map(function (s) {
        return s.over_naive; }), backgroundColor: c + "cc", borderColor: c, borderWidth: 1,
        textAbove: true, pointText: function (j) {
          return steps[j].over_naive == null ? "n/a" : times(steps[j].over_naive); } }] },
      options: {
        layout: { padding: { top: 16 } },
        scales: {
          x: axis("category", "formulation (" + l.device.toUpperCase() + ", " + l.precision +
            ", N = " + size(l.n) + ")", { ticks: { maxRotation: 45, minRotation: 0 } }),
          y: axis("logarithmic", "speedup over naive (×)", { min: 0.2,
            ticks: { callback: oneTwoFive(times) } }) },
        plugins: { legend: { display: false }, tooltip: { callbacks: { label: function (ctx) {
          var s = steps[ctx.dataIndex];
          if (s.rate == null) return s.name + ": not measured (" + s.reason + ")";
          var text = s.name + ": " + si(s.rate, "int/s") + ", " + times(s.over_naive) + " naive";
          if (s.over_previous != null) text += ", " + times(s.over_previous) + " the previous";
          return text;
        } } } } } });
  };

  builders.roofline = function (canvas, index) {
    var r = data.rooflines[index];
    var xs = r.points.map(function (p) { return p.x; });
    var ys = r.points.map(function (p) { return p.y; });
    var compute = r.ceilings.filter(function (c) { return !c.memory; });
    var memory = r.ceilings.filter(function (c) { return c.memory; });
    var top = Math.max.apply(null, compute.map(function (c) { return c.value; }).concat(ys));
    compute.forEach(function (c) { memory.forEach(function (m) { xs.push(c.value / m.value); }); });
    var xmin = Math.min.apply(null, xs) / 4, xmax = Math.max.apply(null, xs) * 4;
    var ymin = Math.min.apply(null, ys.concat(compute.map(function (c) { return c.value; }))) / 10;
    var greys = ["#343a40", "#7048e8", "#2b8a3e", "#868e96", "#0c8599", "#e67700", "#5f3dc4"];
    var datasets = r.ceilings.map(function (c, i) {
      var g = greys[i % greys.length];
      var points = c.memory ? [{ x: xmin, y: c.value * xmin }, { x: xmax, y: c.value * xmax }]
                            : [{ x: xmin, y: c.value }, { x: xmax, y: c.value }];
      return { type: "line", label: c.label + (c.flagged ? " ⚠" : ""), ceiling: c, data: points,
        borderColor: g, backgroundColor: g, borderWidth: 1.5, borderDash: c.memory ? [6, 3] : [],
        pointRadius: 0, pointHitRadius: 0, pointStyle: "line" };
    });
    var kc = r.device === "gpu" ? "#d9480f" : "#1f5fbf";
    var narrow = canvas.parentNode.clientWidth < 520;
    datasets.push({ type: "scatter", label: "kernels (counted)", data: r.points.map(function (p) {
        return { x: p.x, y: p.y, p: p }; }),
      borderColor: kc, pointBorderWidth: 1.5, pointRadius: 5, pointHoverRadius: 7,
      backgroundColor: kc, pointBackgroundColor: r.points.map(function (p) {
        return p.modelled ? "#ffffff" : kc; }),
      pointText: function (j) { return narrow ? String(j + 1) : r.points[j].name; } });
    growPlot(canvas, Math.ceil(datasets.length / 2), 20, 400);
    // On a phone the names would cover one another: the points are numbered, the key below.
    if (narrow) {
      var key = document.createElement("p");
      key.className = "note";
      key.textContent = "Points: " + r.points.map(function (p, j) { return (j + 1) + " " + p.name; }).join(" · ");
      canvas.parentNode.insertAdjacentElement("afterend", key);
    }
    return new Chart(canvas, { type: "scatter", data: { datasets: datasets }, options: {
      scales: {
        x: axis("logarithmic", "counted flops per DRAM byte",
          { min: xmin, max: xmax, ticks: { callback: decadeTicks(""), maxRotation: 0 } }),
        y: axis("logarithmic", "counted FLOP/s", { min: ymin, max: top * 3,
          ticks: { callback: decadeTicks("FLOP/s") } }) },
      plugins: { legend: { labels: { usePointStyle: true } },
        tooltip: { filter: function (item) { return !item.dataset.ceiling; },
        callbacks: { label: function (c) {
          var p = c.raw.p;
          var text = p.name + " at N = " + size(p.n) + ": " + si(p.y, "FLOP/s") + " counted, " +
            Number(p.x.toPrecision(3)) + " flops/byte" + (p.modelled ? " (compulsory traffic, modelled)" : "");
          if (p.at20 != null) text += " (" + si(p.at20, "FLOP/s") + " at 20 flops)";
          return text;
        } } } } } });
  };

  builders.accuracy = function (canvas) {
    var groups = {};
    data.accuracy.forEach(function (p) {
      var key = p.device + " " + p.accuracy_class + " " + p.precision;
      (groups[key] = groups[key] || []).push(p);
    });
    var datasets = Object.keys(groups).sort().map(function (key) {
      var pts = groups[key], p0 = pts[0];
      var c = p0.device === "gpu" ? "#d9480f" : "#1f5fbf";
      return { label: p0.device.toUpperCase() + ", " + p0.precision + ", " + p0.accuracy_class,
        data: pts.map(function (p) { return { x: p.x, y: p.y, p: p }; }),
        borderColor: c, backgroundColor: p0.precision === "f64" ? "#ffffff" : c + "aa",
        pointStyle: p0.accuracy_class === "approximate" ? "triangle" : "circle",
        pointRadius: p0.accuracy_class === "approximate" ? 6 : 4.5, borderWidth: 1.5 };
    });
    var xb = decades(data.accuracy.map(function (p) { return p.x; }));
    var yb = decades(data.accuracy.map(function (p) { return p.y; }));
    return new Chart(canvas, { type: "scatter", data: { datasets: datasets }, options: {
      scales: {
        x: axis("logarithmic", "interactions / s", { min: xb.min, max: xb.max,
          ticks: { callback: decadeTicks(""), maxRotation: 0 } }),
        y: axis("logarithmic", "relative L2 error", { min: yb.min, max: yb.max,
          ticks: { callback: function (v) {
          var l = Math.log10(v);
          return Math.abs(l - Math.round(l)) < 1e-6 ? "1e" + Math.round(l) : ""; } } }) },
      plugins: { tooltip: { callbacks: { label: function (c) {
        var p = c.raw.p;
        return p.name + " at N = " + size(p.n) + ": error " + p.y.toExponential(2) + " (bound " +
          p.bound.toExponential(2) + ", " + (p.passed ? "pass" : "FAIL") + "), " + si(p.x, "int/s");
      } } } } } });
  };

  // Error against time per evaluation at one N: every algorithm on one plane (FAIRNESS rule 9),
  // each device's Pareto front as a line; a log axis cannot show an error of 0, so such a point
  // is named under the chart instead.
  builders.accuracyTime = function (canvas, index) {
    var chart = data.accuracy_time[index], datasets = [], xs = [], ys = [], unplaced = [];
    var shapes = { "all-pairs": "circle", tree: "triangle" };
    chart.devices.forEach(function (d) {
      var c = d.device === "gpu" ? "#d9480f" : "#1f5fbf", device = d.device.toUpperCase();
      var drawn = d.points.filter(function (p) {
        if (p.x > 0 && p.y > 0) { xs.push(p.x); ys.push(p.y); return true; }
        unplaced.push(p.name + " (" + device + ")");
        return false;
      });
      ["all-pairs", "tree"].forEach(function (algorithm) {
        var pts = drawn.filter(function (p) { return p.algorithm === algorithm; });
        if (!pts.length) return;
        datasets.push({ label: device + " " + algorithm, data: pts.map(function (p) {
            return { x: p.x, y: p.y, p: p, device: device }; }),
          borderColor: c, backgroundColor: c + "99", pointStyle: shapes[algorithm],
          pointRadius: algorithm === "tree" ? 6 : 4.5, pointHoverRadius: 8, borderWidth: 1.5,
          clip: 10 });
      });
      var front = drawn.filter(function (p) { return p.front; });
      if (front.length) {
        datasets.push({ type: "line", label: device + " Pareto front", front: true,
          data: front.map(function (p) { return { x: p.x, y: p.y, p: p, device: device }; }),
          borderColor: c, backgroundColor: c, borderWidth: 1.5, borderDash: [6, 3],
          pointRadius: 0, pointHitRadius: 0, pointStyle: "line", stepped: false });
      }
    });
    var xb = decades(xs), yb = decades(ys);
    [1e-2, 1e-3, 1e-4].forEach(function (bar) {
      if (bar < xb.min || bar > xb.max) return;
      datasets.push({ type: "line", label: "accuracy bars 1e-2, 1e-3, 1e-4", bar: true,
        data: [{ x: bar, y: yb.min }, { x: bar, y: yb.max }], borderColor: "#adb5bd",
        backgroundColor: "#adb5bd", borderWidth: 1, borderDash: [2, 3], pointRadius: 0,
        pointHitRadius: 0, pointStyle: "line" });
    });
    growPlot(canvas, Math.ceil(datasets.length / 3), 20, 360);
    if (unplaced.length) {
      var note = document.createElement("p");
      note.className = "note";
      note.textContent = "Not drawn (an error of 0 has no place on a log axis): " + unplaced.join(", ");
      canvas.parentNode.insertAdjacentElement("afterend", note);
    }
    return new Chart(canvas, { type: "scatter", data: { datasets: datasets }, options: {
      scales: {
        x: axis("logarithmic", "relative L2 error", { min: xb.min, max: xb.max,
          ticks: { maxRotation: 0, callback: exponentTicks(xb.min, xb.max) } }),
        y: axis("logarithmic", "seconds per evaluation", { min: yb.min, max: yb.max,
          ticks: { callback: function (v) {
            var l = Math.log10(v);
            return Math.abs(l - Math.round(l)) < 1e-6 ? duration(v) : ""; } } }) },
      plugins: {
        legend: { labels: { usePointStyle: true, filter: function (item, legend) {
          var ds = legend.datasets[item.datasetIndex];
          return !ds.bar || legend.datasets.indexOf(ds) === legend.datasets.findIndex(function (d) { return d.bar; });
        } } },
        tooltip: { filter: function (item) { return !item.dataset.front && !item.dataset.bar; },
          callbacks: { title: noTitle, label: function (c) {
            var p = c.raw.p;
            var bounds = [];
            if (p.walk_bound != null) bounds.push("walk " + Math.round(100 * p.walk_bound) + "%");
            if (p.build_bound != null) bounds.push("build " + Math.round(100 * p.build_bound) + "%");
            var line = p.name + " (" + c.raw.device + ", " + p.algorithm + ", " + p.precision +
              "): " + duration(p.y) + " per evaluation, L2 " + p.x.toExponential(2) + ", max " +
              p.max.toExponential(2) + (p.front ? ", on the Pareto front" : "");
            // A tree's own bounds on a line of their own.
            return bounds.length ? [line, bounds.join(", ") + " of its own bounds"] : line;
          } } } } } });
  };

  builders.fractions = function (canvas) {
    var rows = data.fractions;
    growPlot(canvas, rows.length, 30, 260);
    function pct(key) { return rows.map(function (f) { return f[key] == null ? null : 100 * f[key]; }); }
    var datasets = [
      { label: "of own (instruction) bound", data: pct("own_bound"), backgroundColor: "#5c7cfacc" },
      { label: "of measured FLOP/s peak", data: pct("measured_peak"), backgroundColor: "#adb5bdcc" }];
    return new Chart(canvas, { type: "bar", data: {
      labels: rows.map(function (f) { return f.name + " @ " + size(f.n); }), datasets: datasets },
      options: { indexAxis: "y",
        scales: { x: axis("linear", "% of the bound", { min: 0,
            suggestedMax: 110, ticks: { callback: function (v) { return v + "%"; } } }),
          y: axis("category", "", { title: { display: false }, ticks: { font: rowFont(canvas) } }) },
        plugins: { tooltip: { callbacks: { label: function (c) {
          var f = rows[c.dataIndex], v = c.raw;
          var text = c.dataset.label + ": " + (v == null ? "n/a" : v.toFixed(1) + "%");
          if (v > 100) text += " ⚠ above 100%: the ceiling read low";
          if (c.datasetIndex === 0 && f.mix != null)
            text += "; of the interaction-mix ceiling " + (100 * f.mix).toFixed(1) + "%";
          return text;
        } } } } } });
  };

  // Each repetition as its deviation from that measurement's median, so the spread of every
  // row is visible at once (on one rate axis the decades between formulations would hide it).
  builders.repetitions = function (canvas) {
    var rows = data.repetitions;
    growPlot(canvas, rows.length, 26, 260);
    var byDevice = {}, medians = [];
    rows.forEach(function (r, i) {
      var list = byDevice[r.device] = byDevice[r.device] || [];
      r.samples.forEach(function (v, j) {
        // Spread the dots a little across the row so equal values stay visible.
        var jitter = r.samples.length > 1 ? (j / (r.samples.length - 1) - 0.5) * 0.4 : 0;
        list.push({ x: 100 * (v / r.median - 1), y: i + jitter, v: v, r: r, k: j + 1 });
      });
      medians.push({ x: 0, y: i, v: r.median, r: r });
    });
    var datasets = Object.keys(byDevice).map(function (d) {
      var c = d === "gpu" ? "#d9480f" : "#1f5fbf";
      return { label: d.toUpperCase() + " repetitions", data: byDevice[d], backgroundColor: c + "99",
        borderColor: c, pointRadius: 3.5 };
    });
    datasets.unshift({ label: "median", data: medians, pointStyle: "line", rotation: 90,
      pointRadius: 10, borderWidth: 2, borderColor: "#1d2430", backgroundColor: "#1d2430" });
    return new Chart(canvas, { type: "scatter", data: { datasets: datasets }, options: {
      scales: {
        x: axis("linear", "interactions/s, % from the median", {
          ticks: { callback: function (v) { return (v > 0 ? "+" : "") + v + "%"; } } }),
        y: axis("linear", "", { reverse: true, min: -0.6, max: rows.length - 0.4,
          afterBuildTicks: function (a) { a.ticks = rows.map(function (r, i) { return { value: i }; }); },
          ticks: { autoSkip: false, font: rowFont(canvas), callback: function (v) {
            var r = rows[v]; return r ? r.name + " @ " + size(r.n) + (r.noisy ? " ⚠" : "") : ""; } },
          grid: { color: "#f3f5f8" }, title: { display: false } }) },
      plugins: { tooltip: { callbacks: { label: function (c) {
        var d = c.raw;
        if (d.k === undefined) return d.r.name + " at N = " + size(d.r.n) + ", median: " + si(d.v, "int/s") + (d.r.noisy ? " (noisy)" : "");
        return d.r.name + " at N = " + size(d.r.n) + ", repetition " + d.k + ": " + si(d.v, "int/s") +
          " (" + (d.x >= 0 ? "+" : "") + d.x.toFixed(2) + "%)";
      } } } } } });
  };

  // ---- simulate ----
  function duration(s) {
    var a = Math.abs(s);
    if (a < 1e-3) return Number((s * 1e6).toPrecision(3)) + " µs";
    if (a < 1) return Number((s * 1e3).toPrecision(3)) + " ms";
    return Number(s.toPrecision(3)) + " s";
  }
  // The label says where the point is; Chart.js's default title (the raw x value) would repeat it.
  function noTitle() { return []; }
  // "1e-6" at each decade; within spans of under three decades also 2e-6 and 5e-6.
  function exponentTicks(min, max) {
    var few = Math.log10(max / min) < 3.01;
    return function (v) {
      var e = Math.floor(Math.log10(v) + 1e-9), m = v / Math.pow(10, e);
      if (Math.abs(m - 1) < 1e-6) return "1e" + e;
      if (few && (Math.abs(m - 2) < 1e-6 || Math.abs(m - 5) < 1e-6)) return Math.round(m) + "e" + e;
      return "";
    };
  }

  builders.speedups = function (canvas) {
    var sizes = [], values = [], datasets = [];
    data.speedups.forEach(function (s) {
      [["application", "#2b8a3e", "circle"], ["kernel", "#7048e8", "rectRot"]].forEach(function (k) {
        var kind = k[0];
        var points = s.points.map(function (p) {
          sizes.push(p.n); values.push(p[kind]);
          return { x: p.n, y: p[kind], p: p };
        });
        datasets.push({ label: kind + " speedup (" + s.precision + ")", kind: kind, data: points,
          borderColor: k[1], backgroundColor: k[1], pointStyle: k[2], pointRadius: 4,
          borderDash: s.precision === "f64" ? [7, 4] : [], borderWidth: 2,
          pointText: function (j) { return times(points[j].y); } });
      });
    });
    var yb = decades(values), ns = sortedSizes(sizes);
    return new Chart(canvas, { type: "line", data: { datasets: datasets }, options: {
      scales: {
        // Room either side, so the first and last points and their labels clear the edges.
        x: axis("logarithmic", "N (bodies)", { min: ns[0] / 1.5, max: ns[ns.length - 1] * 1.5,
          afterBuildTicks: sizeTicks(ns),
          ticks: { callback: function (v) { return size(v); }, maxRotation: 0 } }),
        y: axis("logarithmic", "GPU over CPU (×)", { min: yb.min, max: yb.max,
          ticks: { callback: oneTwoFive(times) } }) },
      plugins: { legend: { labels: { usePointStyle: true } }, tooltip: { callbacks: { title: noTitle, label: function (c) {
        var p = c.raw.p;
        return c.dataset.label + " at N = " + size(p.n) + ": " + times(c.raw.y) + " (" + p.gpu +
          " over " + p.cpu + ")";
      } } } } } });
  };

  builders.energy = function (canvas, index) {
    var chart = data.energy[index], errors = [], instants = [];
    var datasets = chart.series.map(function (s) {
      var c = colour(s.device, s.name);
      s.points.forEach(function (p) { errors.push(p.y); instants.push(p.t); });
      return { label: s.name + (s.device === "gpu" ? " (GPU)" : " (CPU)") + (s.failed ? " ⚠ failed" : ""),
        series: s, data: s.points.map(function (p) { return { x: p.t, y: p.y, p: p }; }),
        borderColor: c, backgroundColor: c, borderDash: dash(s), borderWidth: 1.8,
        pointStyle: s.device === "gpu" ? "rectRot" : "circle",
        pointRadius: s.points.length > 40 ? 0 : 2.5, pointHitRadius: 6 };
    });
    growPlot(canvas, Math.ceil(datasets.length / 3), 20, 380);
    var yb = decades(errors);
    return new Chart(canvas, { type: "line", data: { datasets: datasets }, options: {
      scales: {
        x: axis("linear", "time (N-body units)", { min: 0, max: Math.max.apply(null, instants),
          ticks: { maxRotation: 0 } }),
        y: axis("logarithmic", "relative energy error |ΔE/E₀|", { min: yb.min, max: yb.max,
          ticks: { callback: exponentTicks(yb.min, yb.max) } }) },
      plugins: { legend: { labels: { usePointStyle: true } }, tooltip: { callbacks: { title: noTitle, label: function (c) {
        var p = c.raw.p;
        return c.dataset.series.name + " at t = " + Number(p.t.toPrecision(4)) + " (step " + p.step +
          "): " + p.y.toExponential(2);
      } } } } } });
  };

  // Electric energy (FAIRNESS rule 10), not the simulations' physical energy above: each
  // measurement's joules per evaluation against its seconds per evaluation, one dataset per
  // device, each device's idle power × time as a dashed diagonal for scale.
  builders.joules = function (canvas) {
    var chart = data.joules, datasets = [], xs = [], ys = [];
    chart.devices.forEach(function (d) {
      var c = d.device === "gpu" ? "#d9480f" : "#1f5fbf", device = d.device.toUpperCase();
      d.points.forEach(function (p) { xs.push(p.x); ys.push(p.lo > 0 ? p.lo : p.y, p.hi > 0 ? p.hi : p.y); });
      datasets.push({ label: device, device: device, data: d.points.map(function (p) {
          return { x: p.x, y: p.y, lo: p.lo > 0 ? p.lo : null, hi: p.hi > 0 ? p.hi : null, p: p }; }),
        borderColor: c, backgroundColor: c + "99", borderWidth: 1.5, errorBars: true,
        pointStyle: d.points.map(function (p) { return p.tree ? "triangle" : "circle"; }),
        pointRadius: d.points.map(function (p) { return p.tree ? 6 : 4.5; }), pointHoverRadius: 8,
        pointBackgroundColor: d.points.map(function (p) { return p.resolved ? c + "99" : "#ffffff"; }),
        clip: 10 });
    });
    var xb = decades(xs), yb = decades(ys);
    chart.devices.forEach(function (d) {
      if (!(d.idle_watts > 0)) return;
      var c = d.device === "gpu" ? "#d9480f" : "#1f5fbf";
      datasets.push({ type: "line", label: d.device.toUpperCase() + " idle " + si(d.idle_watts, "W") + " × time",
        idle: true, data: [{ x: xb.min, y: d.idle_watts * xb.min }, { x: xb.max, y: d.idle_watts * xb.max }],
        borderColor: c, backgroundColor: c, borderWidth: 1, borderDash: [5, 4], pointRadius: 0,
        pointHitRadius: 0, pointStyle: "line" });
    });
    growPlot(canvas, Math.ceil(datasets.length / 2), 20, 380);
    return new Chart(canvas, { type: "scatter", data: { datasets: datasets }, options: {
      scales: {
        x: axis("logarithmic", "seconds per evaluation", { min: xb.min, max: xb.max,
          ticks: { maxRotation: 0, callback: function (v) {
            var l = Math.log10(v);
            return Math.abs(l - Math.round(l)) < 1e-6 ? duration(v) : ""; } } }),
        y: axis("logarithmic", "joules per evaluation", { min: yb.min, max: yb.max,
          ticks: { callback: function (v) {
            var l = Math.log10(v);
            return Math.abs(l - Math.round(l)) < 1e-6 ? siSmall(v, "J") : ""; } } }) },
      plugins: {
        // A device's key is a filled circle whatever its first point is (a tree, or hollow).
        legend: { labels: { usePointStyle: true, generateLabels: function (c) {
          return Chart.defaults.plugins.legend.labels.generateLabels(c).map(function (item) {
            var ds = c.data.datasets[item.datasetIndex];
            if (!ds.idle) { item.fillStyle = ds.backgroundColor; item.pointStyle = "circle"; }
            return item;
          });
        } } },
        tooltip: { filter: function (item) { return !item.dataset.idle; },
          callbacks: { title: noTitle, label: function (c) {
            var p = c.raw.p;
            var text = p.name + " at N = " + size(p.n) + " (" + c.dataset.device + "): " +
              siSmall(p.y, "J") + " per evaluation";
            if (p.lo > 0 && p.hi > 0) text += " (" + siSmall(p.lo, "J") + "–" + siSmall(p.hi, "J") + ")";
            text += ", " + duration(p.x) + ", " + si(p.w, "W") + " mean, " +
              si(p.per_j, "") + (p.tree ? " bodies/J" : " int/J");
            if (!p.resolved) text += "; spanned " + Number(p.periods.toPrecision(2)) +
              " counter updates, fewer than " + chart.min_periods + ": not resolved";
            return text;
          } } } } } });
  };

  var phaseColours = { force: "#4263eb", "tree build": "#9775fa", integration: "#12b886",
    other: "#adb5bd", diagnostics: "#f59f00", snapshots: "#d6336c" };
  builders.split = function (canvas, index) {
    var split = data.splits[index], rows = split.rows;
    growPlot(canvas, rows.length, 24, 220);
    var datasets = split.phases.map(function (phase) {
      return { label: phase, data: rows.map(function (r) { return 100 * r.shares[phase]; }),
        backgroundColor: phaseColours[phase], borderWidth: 0 };
    });
    return new Chart(canvas, { type: "bar", data: { datasets: datasets, labels: rows.map(function (r) {
        return r.name + (r.failed ? " ⚠" : "") + " (" + duration(r.total_s) + ")"; }) },
      options: { indexAxis: "y",
        scales: {
          x: axis("linear", "% of the application step", { stacked: true, min: 0, max: 100,
            ticks: { callback: function (v) { return v + "%"; } } }),
          y: axis("category", "", { stacked: true, title: { display: false },
            ticks: { autoSkip: false, font: rowFont(canvas) } }) },
        plugins: { tooltip: { mode: "index", callbacks: {
          title: function (items) {
            var r = rows[items[0].dataIndex];
            return r.name + " at N = " + size(split.n) + ": " + duration(r.total_s) + " per step";
          },
          label: function (c) {
            var s = rows[c.dataIndex].seconds[c.dataset.label];
            return c.dataset.label + ": " + c.raw.toFixed(1) + "% (" + duration(s) +
              (s < 0 ? ", below zero: noise, drawn as 0" : "") + ")";
          } } } } } });
  };

  // ---- scaling ----
  builders.scalingEfficiency = function (canvas, index) {
    var chart = data.efficiency[index], ks = [], ys = [100];
    var datasets = chart.series.map(function (s) {
      var c = colour(s.device, s.name);
      s.points.forEach(function (p) { ks.push(p.k); ys.push(100 * p.y); });
      return { label: s.name, series: s,
        data: s.points.map(function (p) { return { x: p.k, y: 100 * p.y, p: p }; }),
        borderColor: c, backgroundColor: c, borderDash: dash(s), borderWidth: 2,
        pointStyle: s.device === "gpu" ? "rectRot" : "circle", pointRadius: 4.5,
        pointBackgroundColor: s.points.map(function (p) { return p.disturbed ? "#ffffff" : c; }) };
    });
    var kmin = Math.min.apply(null, ks), kmax = Math.max.apply(null, ks);
    datasets.push({ label: "100%", data: [{ x: kmin, y: 100 }, { x: kmax, y: 100 }],
      borderColor: "#868e96", backgroundColor: "#868e96", borderDash: [4, 4], borderWidth: 1,
      pointRadius: 0, pointHitRadius: 0, pointStyle: "line" });
    // The plot keeps its height whatever the legend takes: a long series name is a legend row.
    canvas.parentNode.style.height = Math.max(340, 300 + 18 * datasets.length) + "px";
    var top = Math.max.apply(null, ys);
    return new Chart(canvas, { type: "line", data: { datasets: datasets }, options: {
      scales: {
        // Half a device either side, so the end points and their markers clear the edges.
        x: axis("linear", chart.x_title, { min: kmin - 0.5, max: kmax + 0.5,
          afterBuildTicks: sizeTicks(sortedSizes(ks)),
          ticks: { callback: function (v) { return String(v); }, maxRotation: 0 } }),
        y: axis("linear", "parallel efficiency (%)", { min: 0, max: Math.ceil((top + 10) / 20) * 20,
          ticks: { callback: function (v) { return v + "%"; } } }) },
      plugins: { legend: { labels: { usePointStyle: true } }, tooltip: { callbacks: {
        title: noTitle, label: function (c) {
          var p = c.raw.p;
          if (!p) return c.dataset.label;
          return p.text + (p.disturbed ? " ⚠ " + p.disturbed : "");
        } } } } } });
  };

  var partColours = { compute: "#4263eb", communication: "#f59f00", other: "#adb5bd" };
  builders.scalingSplit = function (canvas, index) {
    var split = data.splits[index], rows = split.rows;
    // A row as tall as its label's lines.
    var lines = Math.max.apply(null, rows.map(function (r) { return r.lines.length; }));
    growPlot(canvas, rows.length, Math.max(52, 14 * lines + 10), 240);
    var datasets = split.parts.map(function (part) {
      return { label: part.label, key: part.key,
        data: rows.map(function (r) { return r.seconds[part.key]; }),
        backgroundColor: partColours[part.key], borderWidth: 0 };
    });
    return new Chart(canvas, { type: "bar", data: { datasets: datasets,
        labels: rows.map(function (r) { return r.lines; }) },
      options: { indexAxis: "y",
        scales: {
          x: axis("linear", "median time per " + split.per, { stacked: true, min: 0,
            ticks: { callback: function (v) { return duration(v); }, maxRotation: 0,
              maxTicksLimit: 5 } }),
          y: axis("category", "", { stacked: true, title: { display: false },
            ticks: { autoSkip: false, font: rowFont(canvas) } }) },
        plugins: { tooltip: { mode: "index", callbacks: {
          title: function (items) {
            var r = rows[items[0].dataIndex];
            return r.title + ": " + duration(r.total_s) + " per " + split.per;
          },
          label: function (c) {
            return c.dataset.label + ": " + duration(rows[c.dataIndex].seconds[c.dataset.key]);
          } } } } } });
  };

  var built = 0;
  canvases.forEach(function (canvas) {
    try {
      var build = builders[canvas.dataset.kind];
      if (!build) throw new Error("no builder for " + canvas.dataset.kind);
      build(canvas, Number(canvas.dataset.index));
      built++;
    } catch (e) {
      recordError(canvas.id + ": " + (e && e.message ? e.message : e));
    }
  });
  body.dataset.chartsBuilt = String(built);
})();
