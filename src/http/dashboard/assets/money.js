/* global window, document */
// The dashboard's money page (src/http/dashboard/money.pages.ts): each chart drawn by Chart.js from
// the table that follows it (the numbers in each cell's data-value), so the tables stay the page
// without JavaScript and the charts show exactly their numbers. No inline script: the page's CSP
// allows only this file and Chart.js's, both from this server.
(function () {
  'use strict';
  if (typeof window.Chart !== 'function') return;
  var COLOURS = ['#1f5fbf', '#b3261e', '#1b7f3b', '#8a4baf', '#a15c00', '#00727a'];
  var blocks = document.querySelectorAll('.chart[data-chart]');
  Array.prototype.forEach.call(blocks, function (block) {
    var table = document.getElementById(block.getAttribute('data-table'));
    if (!table) return;
    var headers = Array.prototype.map.call(table.querySelectorAll('thead th'), function (th) { return th.textContent; }).slice(1);
    var rows = table.querySelectorAll('tbody tr');
    var labels = Array.prototype.map.call(rows, function (tr) { return tr.querySelector('th').textContent; });
    var kind = block.getAttribute('data-chart');
    var datasets = headers.map(function (name, i) {
      var colour = COLOURS[i % COLOURS.length];
      return {
        label: name,
        data: Array.prototype.map.call(rows, function (tr) { return Number(tr.querySelectorAll('td')[i].getAttribute('data-value')); }),
        borderColor: colour,
        backgroundColor: kind === 'bar' ? colour : 'transparent',
        pointRadius: rows.length > 60 ? 0 : 2,
        tension: 0.2,
      };
    });
    block.hidden = false;
    new window.Chart(block.querySelector('canvas'), {
      type: kind,
      data: { labels: labels, datasets: datasets },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        interaction: { mode: 'index', intersect: false },
        scales: { y: { beginAtZero: true } },
        plugins: { legend: { display: datasets.length > 1 } },
      },
    });
  });
})();
