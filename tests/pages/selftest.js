// Injected by tests/test_docs_sites.py into a built docs page: for every <video>, whether its
// poster loads, how far it sits past its content column, how many subtitle cues load, and
// whether it plays (currentTime advances, or a frame 1.5 s in decodes); written as JSON into a pre element, id selftest.
//
// Chromium runs the page on virtual time (--virtual-time-budget), which races ahead whenever no
// fetch is pending: a setTimeout wait costs no real time, while the decoder runs in real time. So
// a wait for the decoder is a fetch of the test server's /__wait, which answers after that many
// real milliseconds (tests/test_docs_sites.py); a page not served by it waits on virtual time.
(async () => {
  const wait = (ms) => new Promise((done) => setTimeout(done, ms));
  const pause = (ms) => fetch(`/__wait?ms=${ms}`).then((answer) => (answer.status === 204 ? undefined : wait(ms)), () => wait(ms));
  const until = async (ready, ms) => { let waited = 0; for (; !ready() && waited < ms; waited += 200) await pause(200); return waited; };
  const reports = [];
  for (const video of document.querySelectorAll("video")) {
    const report = { poster: 0, overflow: null, width: null, column: null, cues: 0, duration: null, advanced: null, seeked: null, error: null };
    report.poster = await new Promise((done) => {
      const image = new Image();
      image.onload = () => done(image.naturalWidth);
      image.onerror = () => done(0);
      image.src = video.poster;
    });
    const column = video.closest(".md-content, [role=main], div.body, article, main") || video.parentElement;
    const box = video.getBoundingClientRect();
    const room = column.getBoundingClientRect();
    report.overflow = box.right - room.right;
    report.width = box.width;
    report.column = room.width;
    const track = video.querySelector("track");
    video.textTracks[0].mode = "hidden";
    await Promise.race([
      new Promise((done) => { if (track.readyState === 2) done(); track.addEventListener("load", done); track.addEventListener("error", done); }),
      wait(10000),
    ]);
    report.cues = video.textTracks[0].cues ? video.textTracks[0].cues.length : 0;
    video.muted = true;
    video.preload = "auto";  // a seek in a clip loaded for its metadata only stalls headless
    let failed = false;
    video.addEventListener("error", () => { failed = true; });
    video.load();
    await until(() => failed || video.readyState >= 1, 15000);  // its metadata
    report.duration = video.duration;
    // First a frame further in must decode (seek to it); then the clip should play. Headless
    // Chromium without a sound device never starts the clock of a clip with sound. A busy
    // machine (a CI run of the whole suite) has taken 20 s of real time over a seek.
    let seeked = false;
    video.addEventListener("seeked", () => { seeked = true; }, { once: true });
    video.currentTime = Math.min(1.5, video.duration / 2);
    report.seek_waited_ms = await until(() => failed || (seeked && video.readyState >= 2), 30000);
    report.seeked = video.readyState >= 2 ? video.currentTime : 0;
    const before = video.currentTime;
    try { await Promise.race([video.play(), wait(5000)]); } catch (error) { report.error = String(error); }
    await Promise.race([
      new Promise((done) => video.addEventListener("timeupdate", () => { if (video.currentTime - before >= 0.5) done(); })),
      wait(10000),
    ]);
    report.advanced = video.currentTime - before;
    video.pause();
    if (video.error) report.error = "media error " + video.error.code;
    reports.push(report);
  }
  const out = document.createElement("pre");
  out.id = "selftest";
  out.textContent = JSON.stringify(reports);
  document.body.appendChild(out);
})();
