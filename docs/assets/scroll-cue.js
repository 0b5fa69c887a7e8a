// Content wider than the text column (a table of many columns, a long code line, a wide
// display equation) scrolls sideways inside its own box. A scrollbar alone is easy to miss
// (many systems hide it until the pointer moves), so each such box also gets a visible cue:
// a shaded edge on each side that hides something, gone once that side is scrolled into
// view. The box of a table or an equation is a <div class=
// "scroll-cue"> put around the element that scrolls; a code block's is its <pre>.
// tests/test_docs_browser.py measures every page: nothing wider than the column without
// this cue.
(function () {
  var SCROLLERS = ".md-typeset .md-typeset__scrollwrap, .md-typeset div.arithmatex, " +
                  ".md-typeset pre > code";

  function cueBox(scroller) {
    var parent = scroller.parentElement;
    if (parent.tagName === "PRE" || parent.classList.contains("scroll-cue")) {
      parent.classList.add("scroll-cue");
      return parent;
    }
    var box = document.createElement("div");
    box.className = "scroll-cue" +
      (scroller.classList.contains("md-typeset__scrollwrap") ? " scroll-cue--table" : "");
    parent.insertBefore(box, scroller);
    box.appendChild(scroller);
    return box;
  }

  function update(scroller, box) {
    var hidden = scroller.scrollWidth - scroller.clientWidth;
    box.classList.toggle("scroll-cue--wide", hidden > 1);
    box.classList.toggle("scroll-cue--left", hidden > 1 && scroller.scrollLeft > 1);
    box.classList.toggle("scroll-cue--right", hidden - scroller.scrollLeft > 1);
  }

  function setUp() {
    var pairs = [];
    document.querySelectorAll(SCROLLERS).forEach(function (scroller) {
      var box = cueBox(scroller);
      pairs.push([scroller, box]);
      update(scroller, box);
      scroller.addEventListener("scroll", function () { update(scroller, box); },
                                {passive: true});
    });
    // Widths settle after this runs (fonts, images, a resized window): measure again
    // whenever a box or what it holds changes size.
    var again = function () { pairs.forEach(function (p) { update(p[0], p[1]); }); };
    if (typeof ResizeObserver !== "undefined") {
      var observer = new ResizeObserver(again);
      pairs.forEach(function (p) {
        observer.observe(p[0]);
        if (p[0].firstElementChild) observer.observe(p[0].firstElementChild);
      });
    }
    window.addEventListener("resize", again);
    window.addEventListener("load", again);
    document.body.setAttribute("data-scroll-cues", pairs.length);
  }

  // After the theme has wrapped the tables (its document$ observable) and KaTeX has drawn
  // the equations (assets/katex.js subscribes first, so it runs first).
  if (typeof document$ !== "undefined") {
    document$.subscribe(setUp);
  } else {
    document.addEventListener("DOMContentLoaded", setUp);
  }
})();
