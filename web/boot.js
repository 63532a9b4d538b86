// boot.js: a classic script (it loads from file://, where the page's module script does not): when the
// page was opened as a file, say so and where to go instead of "loading…" forever. The single-file build
// (build/single/attnviz.html) works from file:// and leaves this script out.
if (location.protocol === 'file:') {
  document.addEventListener('DOMContentLoaded', () => {
    const status = document.getElementById('status');
    if (status) status.textContent = 'opened from a file: this page needs a web server (make run), or use the single-file build, build/single/attnviz.html';
  });
}
