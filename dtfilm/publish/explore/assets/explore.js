// The explorer page's script: it only looks states up in states.js (computed ahead by dtfilm's
// cost model) and shows them. No number is computed here.
(() => {
  "use strict";
  const data = window.DTFILM_EXPLORE;
  const byId = (id) => document.getElementById(id);
  const model = byId("model"), gpu = byId("gpu"), slider = byId("micro-batches"), ckpt = byId("checkpointing");
  const pills = [...document.querySelectorAll(".pill")];
  let pill = data.opening.split("|")[2];
  let shownChapter = null;
  const lightScheme = window.matchMedia("(prefers-color-scheme: light)");

  const microBatches = () => data.micro_batches[Number(slider.value)];
  const precision = () => document.querySelector('input[name="precision"]:checked').value;
  const stateKey = () =>
    [model.value, gpu.value, pill, microBatches(), precision(), ckpt.checked ? "ckpt" : "nockpt"].join("|");

  function showFilm() {
    const chapter = data.chapters[pill];
    const id = chapter ? chapter.id : null;
    if (id === shownChapter) return;
    shownChapter = id;
    byId("film-player").hidden = !chapter;
    byId("film-missing").hidden = Boolean(chapter);
    byId("film-title").textContent = chapter ? chapter.title : "not rendered";
    if (!chapter) return;
    const video = byId("film-video");
    video.pause();
    video.replaceChildren();
    video.poster = chapter.poster;
    const source = document.createElement("source");
    source.src = chapter.src;
    source.type = "video/mp4";
    video.append(source);
    if (chapter.vtt) {
      const track = document.createElement("track");
      Object.assign(track, { kind: "captions", srclang: "en", label: "English", src: chapter.vtt, default: true });
      video.append(track);
    }
    video.load();
  }

  // The pills the model is not offered (EP for a dense model), each with why: marked
  // aria-disabled, the reason said under the pills; a pill dropped by a model change falls back to DP.
  function markPills() {
    const off = (data.disabled || {})[model.value] || {};
    pills.forEach((button) => {
      const why = off[button.dataset.pill];
      if (why) {
        button.setAttribute("aria-disabled", "true");
        button.setAttribute("aria-describedby", "pill-note");
      } else {
        button.removeAttribute("aria-disabled");
        button.removeAttribute("aria-describedby");
      }
    });
    const note = byId("pill-note");
    note.textContent = Object.entries(off).map(([p, why]) => `${p} is off: ${why}`).join(" ");
    note.hidden = !note.textContent;
    if (off[pill]) pill = "DP";
  }

  function show() {
    markPills();
    const key = stateKey();
    const state = data.states[key];
    if (!state) return;
    document.body.dataset.state = key;
    const m = microBatches();
    byId("micro-batches-value").textContent = m;
    slider.setAttribute("aria-valuetext", `${m} micro-batches`);
    state.stats.forEach(([text, value], i) => {
      const element = byId(`stat-${i}`);
      element.textContent = text;
      element.dataset.value = value;
    });
    byId("verdict").textContent = state.verdict;
    byId("stat-box-0").classList.toggle("oom", !state.fits);
    byId("plan").textContent = state.plan;
    const [dark, light, width, height] = data.pictures[state.picture];
    const image = byId("picture");
    byId("picture-light").srcset = `stills/${light}`;
    Object.assign(image, { src: `stills/${dark}`, alt: state.alt, width, height });
    byId("picture-link").href = `stills/${lightScheme.matches ? light : dark}`;  // the still shown, full size
    pills.forEach((button) => button.setAttribute("aria-pressed", String(button.dataset.pill === pill)));
    document.querySelectorAll("[data-pill-text]").forEach((p) => { p.hidden = p.dataset.pillText !== pill; });
    showFilm();
  }

  pills.forEach((button) => button.addEventListener("click", () => {
    if (button.getAttribute("aria-disabled") === "true") return;  // the note under the pills says why
    pill = button.dataset.pill;
    show();
  }));
  [model, gpu, ckpt, ...document.querySelectorAll('input[name="precision"]')].forEach((input) =>
    input.addEventListener("change", show));
  slider.addEventListener("input", show);
  lightScheme.addEventListener("change", show);
  shownChapter = data.chapters[pill] ? data.chapters[pill].id : null;
  show();
})();
