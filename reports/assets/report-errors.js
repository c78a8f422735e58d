window.reportErrors = [];
window.onerror = function (message, source, line) {
  window.reportErrors.push(message + " (" + (source || "inline") + ":" + line + ")");
  if (document.body) document.body.dataset.jsErrors = window.reportErrors.join(" | ");
};
