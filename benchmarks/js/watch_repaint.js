() => {
    window.__last = performance.now();
    const main = document.querySelector('[data-testid="stMain"]');
    const app = document.querySelector('[data-testid="stApp"]');
    const mark = () => { window.__last = performance.now(); };
    new MutationObserver((mutations) => {
        if (mutations.some(m => (m.target.closest ? m.target : m.target.parentElement)
                ?.closest('[data-testid="stVegaLiteChart"]'))) { mark(); }
    }).observe(main, {subtree: true, childList: true, attributes: true, characterData: true});
    new MutationObserver(() => { if (app.dataset.testScriptState === 'notRunning') mark(); })
        .observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
}
