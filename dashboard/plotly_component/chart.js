// One dashboard chart (dashboard/render.py chart, a st.components.v2 component drawn in the
// page itself, no iframe): the figure's Plotly JSON drawn with the partial plotly.js bundle
// that scripts/_setup.sh installs beside this file. The bundle is evaluated once per tab and
// shared by every chart (docs/dashboard.md); text takes the page theme's colour and font.
export default function ({ parentElement, data }) {
  window.agentslaPlotly = window.agentslaPlotly || new Promise(function (resolve, reject) {
    var script = document.createElement("script");
    script.src = data.bundle;
    script.onload = function () { resolve(window.Plotly); };
    script.onerror = reject;
    document.head.appendChild(script);
  });
  var fig = JSON.parse(data.figure), style = getComputedStyle(parentElement);
  fig.layout.font = Object.assign({color: style.color, family: style.fontFamily}, fig.layout.font);
  window.agentslaPlotly.then(function (Plotly) {
    Plotly.react(parentElement.firstElementChild, fig.data, fig.layout, data.config);
  });
}
