([t0, quietMs]) => {
    const app = document.querySelector('[data-testid="stApp"]');
    const idle = app && app.dataset.testScriptState === 'notRunning';
    const charts = Array.from(document.querySelectorAll('[data-testid="stVegaLiteChart"]'));
    const drawn = charts.every(c => c.querySelector('canvas, svg'));
    return idle && drawn && window.__last > t0 && performance.now() - window.__last > quietMs;
}
