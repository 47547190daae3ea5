([finished, number]) => {
    const embeds = [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')];
    const ready = document.querySelector(finished) !== null
        && new URLSearchParams(location.search).get('section') === String(number)
        && document.querySelector('.st-key-present_screen') !== null
        && embeds.every(e => e.querySelector('canvas, svg'));
    if (!ready) { window.__drawnSince = undefined; return false; }
    window.__drawnSince = window.__drawnSince || performance.now();
    return performance.now() - window.__drawnSince > 500;
}
