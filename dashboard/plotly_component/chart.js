// One dashboard chart (dashboard/render.py chart, a st.components.v2 component drawn in the
// page itself, no iframe): the figure's Plotly JSON drawn with the partial plotly.js bundle
// that scripts/_setup.sh installs beside this file. The bundle is evaluated once per tab and
// shared by every chart (docs/dashboard.md); text takes the page theme's colour and font.
// When the bundle cannot be loaded (or plotly.js refuses the figure), the chart's place says
// so, and the next draw tries to load the bundle again. Without a figure (render.preload_charts)
// it only starts loading the bundle, so plotly.js is evaluated while the page waits for the API.
export default function ({ parentElement, data }) {
  var place = parentElement.firstElementChild;
  window.agentslaPlotly = window.agentslaPlotly || new Promise(function (resolve, reject) {
    var script = document.createElement("script");
    script.src = data.bundle;
    script.onload = function () {
      if (window.Plotly) { resolve(window.Plotly); } else { reject(new Error("it defined no Plotly")); }
    };
    script.onerror = function () { reject(new Error("the browser could not load it")); };
    document.head.appendChild(script);
  });
  if (!data.figure) {  // a preload: a failed load is reported by the charts that need it
    window.agentslaPlotly.catch(function () {});
    return;
  }
  var fig = JSON.parse(data.figure), style = getComputedStyle(parentElement);
  fig.layout.font = Object.assign({color: style.color, family: style.fontFamily}, fig.layout.font);
  var loading = window.agentslaPlotly;
  loading.then(function (Plotly) {
    if (place.hasAttribute("data-chart-error")) {  // an earlier draw failed: clear its message
      place.removeAttribute("data-chart-error");
      place.removeAttribute("role");
      place.style.cssText = "";
      place.textContent = "";
    }
    return Plotly.react(place, fig.data, fig.layout, data.config);
  }).catch(function (error) {
    if (window.agentslaPlotly === loading && !window.Plotly) { window.agentslaPlotly = null; }
    place.setAttribute("data-chart-error", "");
    place.setAttribute("role", "alert");
    place.style.cssText = "padding: 1rem; border-radius: 0.5rem; color: #b42318; " +
      "background: rgba(255, 43, 43, 0.09)";
    place.textContent = "This chart cannot be drawn: plotly.js (" + data.bundle + ") " +
      (window.Plotly ? "refused the figure: " : "did not load: ") +
      ((error && error.message) || error) + ". Reload the page to try again.";
  });
}
