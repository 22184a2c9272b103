"""What the browser tests read of a text's legibility."""

# WCAG contrast between an element's text colour and the first opaque background behind it.
CONTRAST_JS = """(el) => {
  const probe = document.createElement("canvas").getContext("2d");
  const rgba = (css) => {
    probe.clearRect(0, 0, 1, 1);
    probe.fillStyle = "#000";
    probe.fillStyle = css;
    probe.fillRect(0, 0, 1, 1);
    return Array.from(probe.getImageData(0, 0, 1, 1).data);
  };
  let bg = null;
  for (let cur = el; cur && !bg; cur = cur.parentElement) {
    const c = rgba(getComputedStyle(cur).backgroundColor);
    if (c[3] === 255) bg = c;
  }
  bg = bg ?? [255, 255, 255, 255];
  const fg = rgba(getComputedStyle(el).color);
  const mix = fg.slice(0, 3).map((v, k) => (v * fg[3] + bg[k] * (255 - fg[3])) / 255);
  const lum = ([r, g, b]) => {
    const f = (c) => (c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const [a, b] = [lum(mix), lum(bg)];
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}"""
