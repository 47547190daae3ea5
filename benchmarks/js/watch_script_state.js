() => {
    window.__states = [];
    window.__watched = document.querySelector('[data-testid="stApp"]');
    const app = document.querySelector('[data-testid="stApp"]');
    new MutationObserver((records) => {
        const now = performance.now();
        records.forEach((record, i) => {
            const next = records[i + 1];
            window.__states.push([next ? next.oldValue : app.dataset.testScriptState, now]);
        });
    }).observe(app, {attributes: true, attributeOldValue: true,
                     attributeFilter: ['data-test-script-state']});
}
