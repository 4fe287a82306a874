() => {
  const vw = document.documentElement.clientWidth;
  const problems = [];
  const hiddenish = (el) => {
    for (let n = el; n; n = n.parentElement) {
      const cs = getComputedStyle(n);
      if (cs.display === "none" || cs.visibility === "hidden") return true;
      if (n.classList && (n.classList.contains("visually-hidden") || n.classList.contains("skip-link"))) return true;
      if (n.hidden || n.tagName === "DETAILS" && !n.open && n !== el && !el.closest("summary")) return false;
    }
    return false;
  };
  const scroller = (el) => {
    for (let n = el.parentElement; n && n !== document.body; n = n.parentElement) {
      const ox = getComputedStyle(n).overflowX;
      if (ox === "auto" || ox === "scroll" || ox === "hidden" || ox === "clip") return n;
    }
    return null;
  };
  for (const el of document.body.querySelectorAll("*")) {
    if (hiddenish(el)) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    const box = scroller(el);
    if (!box && (r.right > vw + 1 || r.left < -1)) {
      problems.push(`wider than the viewport: <${el.tagName.toLowerCase()} class="${el.className}"> ${Math.round(r.left)}..${Math.round(r.right)} of ${vw}`);
    }
  }
  for (const box of document.querySelectorAll("*")) {
    const cs = getComputedStyle(box);
    if (!["auto", "scroll"].includes(cs.overflowX) || box.scrollWidth <= box.clientWidth + 1) continue;
    if (box.tagName === "svg" || box.closest(".term-pop")) continue;
    const b = box.getBoundingClientRect();
    const hidden = [...box.querySelectorAll("a[href], button, input, select, th, td")].filter((c) => {
      const r = c.getBoundingClientRect();
      return r.width > 0 && (r.right > b.right + 1 || r.left < b.left - 1);
    });
    if (hidden.length) {
      problems.push(`scrolls sideways hiding ${hidden.length} cells or controls: <${box.tagName.toLowerCase()} class="${box.className}"> (${hidden[0].textContent.trim().slice(0, 30)})`);
    }
  }
  return problems;
}
