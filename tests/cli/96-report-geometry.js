// SPDX-License-Identifier: MIT
// Measures report.html as Chromium lays it out (tests/cli/96-report-geometry.sh appends this to a
// copy of the page, the report itself holds no script, and shows it in an iframe of the width to
// test) and writes the verdict as JSON into a pre element of id "geometry" in the frame's parent:
// every problem found, and how much was looked at.
//   page:    the page never scrolls sideways (nothing wider than the viewport outside a scroller)
//   table:   each table fits its container, or its container scrolls sideways and fits the page
//   token:   no text in a table breaks inside a word or a number (a line may end only after a
//            space, a hyphen or a slash)
//   label:   in each chart every <text> lies inside the SVG, no two overlap, none crosses a data
//            line (polyline.series) or a bar
(function () {
	const out = { width: innerWidth, tables: 0, cells: 0, chars: 0, charts: 0, texts: 0, problems: [] };
	const seen = new Set();
	const problem = (kind, what) => {
		if (!seen.has(kind + what)) out.problems.push(kind + ': ' + what);
		seen.add(kind + what);
	};
	const short = (s) => (s || '').replace(/\s+/g, ' ').trim().slice(0, 60);
	const scroller = (el) => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
	const inScroller = (el) => {
		for (let p = el.parentElement; p && p !== document.body; p = p.parentElement)
			if (scroller(p)) return true;
		return false;
	};

	// page
	if (document.documentElement.scrollWidth > innerWidth + 1)
		problem('page', `the page is ${document.documentElement.scrollWidth} px wide in a ${innerWidth} px viewport`);
	const past = (el) => {
		const r = el.getBoundingClientRect();
		return r.width && (r.right > innerWidth + 1 || r.left < -1);
	};
	for (const el of document.body.querySelectorAll('*')) {
		const r = el.getBoundingClientRect();
		// the outermost element past the edge, unless a scroller holds it
		if (past(el) && !past(el.parentElement) && !inScroller(el))
			problem('page', `<${el.tagName.toLowerCase()}> "${short(el.textContent)}" spans ${Math.round(r.left)}..${Math.round(r.right)} px of ${innerWidth}`);
	}

	// tables
	for (const t of document.querySelectorAll('table')) {
		const c = t.parentElement, w = t.getBoundingClientRect().width;
		const head = short(t.querySelector('th') ? t.querySelector('tr').textContent : t.textContent);
		out.tables++;
		if (w > c.clientWidth + 1 && !scroller(c))
			problem('table', `"${head}" is ${Math.round(w)} px wide in a ${c.clientWidth} px container that does not scroll`);
		if (scroller(c) && c.getBoundingClientRect().right > innerWidth + 1)
			problem('table', `the scroller of "${head}" ends past the page`);
	}

	// tokens: walk each cell's characters; where one starts a new line, the one before must end a word
	const range = document.createRange();
	for (const cell of document.querySelectorAll('td, th')) {
		const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
		let prevTop = null, prevChar = ' ';
		out.cells++;
		for (let n = walker.nextNode(); n; n = walker.nextNode()) {
			const s = n.data;
			for (let i = 0; i < s.length; i++) {
				const ch = s[i];
				out.chars++;
				if (/\s/.test(ch)) { prevChar = ch; continue; }
				range.setStart(n, i);
				range.setEnd(n, i + 1);
				const r = range.getBoundingClientRect();
				if (!r.height) continue;
				if (prevTop !== null && r.top > prevTop + r.height / 2 && !/[\s\-\/]/.test(prevChar))
					problem('token', `"${short(cell.textContent)}" breaks a line inside a word, before "${s.slice(i, i + 12)}"`);
				prevTop = r.top;
				prevChar = ch;
			}
		}
	}

	// chart labels
	const overlap = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 0.5 &&
		Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 0.5;
	// does the segment p..q pass through the box (shrunk by 0.5 px)? Liang-Barsky clipping
	const crosses = (p, q, b) => {
		let t0 = 0, t1 = 1;
		const dx = q.x - p.x, dy = q.y - p.y;
		const edges = [[-dx, p.x - (b.left + 0.5)], [dx, b.right - 0.5 - p.x], [-dy, p.y - (b.top + 0.5)], [dy, b.bottom - 0.5 - p.y]];
		for (const [pp, qq] of edges) {
			if (pp === 0) { if (qq < 0) return false; continue; }
			const t = qq / pp;
			if (pp < 0) t0 = Math.max(t0, t); else t1 = Math.min(t1, t);
			if (t0 > t1) return false;
		}
		return true;
	};
	for (const svg of document.querySelectorAll('svg.chart')) {
		const name = svg.getAttribute('data-chart'), box = svg.getBoundingClientRect(), ctm = svg.getScreenCTM();
		const texts = [...svg.querySelectorAll('text')].map((t) => ({ t, r: t.getBoundingClientRect() }));
		const lines = [...svg.querySelectorAll('polyline.series')].map((pl) =>
			[...pl.points].map((p) => { const s = svg.createSVGPoint(); s.x = p.x; s.y = p.y; return s.matrixTransform(ctm); }));
		const bars = [...svg.querySelectorAll('rect.bar, rect.hbar')].map((b) => b.getBoundingClientRect());
		out.charts++;
		out.texts += texts.length;
		for (const { t, r } of texts) {
			if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
				problem('label', `${name}: "${t.textContent}" leaves the chart`);
			for (const pts of lines)
				for (let i = 1; i < pts.length; i++)
					if (crosses(pts[i - 1], pts[i], r)) {
						problem('label', `${name}: a data line crosses "${t.textContent}"`);
						i = pts.length;
					}
			for (const b of bars)
				if (overlap(r, b)) problem('label', `${name}: a bar covers "${t.textContent}"`);
		}
		for (let i = 0; i < texts.length; i++)
			for (let k = i + 1; k < texts.length; k++)
				if (overlap(texts[i].r, texts[k].r))
					problem('label', `${name}: "${texts[i].t.textContent}" and "${texts[k].t.textContent}" overlap`);
	}

	// the page is measured in an iframe of the width asked (headless Chromium's window is at least
	// 500 px wide): the verdict goes to the frame's parent
	const doc = window.parent !== window ? window.parent.document : document;
	const pre = doc.createElement('pre');
	pre.id = 'geometry';
	pre.textContent = JSON.stringify(out);
	doc.body.appendChild(pre);
})();
