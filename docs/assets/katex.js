// Render the \( ... \) and \[ ... \] spans that pymdownx.arithmatex leaves (generic mode),
// with the KaTeX vendored under assets/katex: no CDN. document$ is mkdocs-material's
// page-load observable, so this also runs after instant navigation. A formula KaTeX cannot
// parse is reported on the console (the browser test fails on it).
var KATEX_MACROS = {
  // Spinning Up's \underE{x \sim P}{f(x)}: an expectation with its distribution below E.
  "\\underE": "\\underset{#1}{\\mathrm{E}}\\left[#2\\right]"
};

function renderMath() {
  document.querySelectorAll(".arithmatex").forEach(function (el) {
    renderMathInElement(el, {
      delimiters: [
        {left: "\\(", right: "\\)", display: false},
        {left: "\\[", right: "\\]", display: true}
      ],
      macros: KATEX_MACROS,
      throwOnError: true
    });
  });
}

if (typeof document$ !== "undefined") {
  document$.subscribe(renderMath);
} else {
  document.addEventListener("DOMContentLoaded", renderMath);
}
