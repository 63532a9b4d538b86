// The panel interface (web/ui/panel.mjs): the registry takes only panels (every method of the interface, a
// name of its own), walks them in order, and composes their snapshot parts; main.mjs and embed.mjs mount
// every panel through it.
import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { createPanels, checkPanel, PANEL_METHODS, NOTHING } from '../../web/ui/panel.mjs';

const log = [];
const panel = (name, part = null) => ({
  name,
  sync: (st) => log.push(`${name}.sync ${st.n}`),
  update: (st) => log.push(`${name}.update ${st.n}`),
  draw: () => log.push(`${name}.draw`),
  snapshot: () => part,
  dispose: () => log.push(`${name}.dispose`),
});

describe('the panel interface', () => {
  it('is mount, sync, update, draw, snapshot and dispose, and a panel lacking one is refused', () => {
    expect(PANEL_METHODS).toEqual(['sync', 'update', 'draw', 'snapshot', 'dispose']);
    for (const m of PANEL_METHODS) {
      const p = panel('x'); delete p[m];
      expect(() => checkPanel(p)).toThrow(`the panel "x" lacks ${m}`);
      expect(() => createPanels().add(p)).toThrow(m);
    }
    expect(() => checkPanel({ ...NOTHING })).toThrow('a panel needs a name');
    expect(checkPanel({ ...NOTHING, name: 'quiet' }).snapshot()).toBeNull();
  });

  it('walks the panels in the order they were added, once each, and refuses a second of one name', () => {
    log.length = 0;
    const ps = createPanels();
    ps.add(panel('a')); ps.add(panel('b'));
    expect(() => ps.add(panel('a'))).toThrow('a second panel named "a"');
    ps.sync({ n: 8 }); ps.update({ n: 9 }); ps.draw(); ps.dispose();
    expect(log).toEqual(['a.sync 8', 'b.sync 8', 'a.update 9', 'b.update 9', 'a.draw', 'b.draw', 'b.dispose', 'a.dispose']);
    expect(ps.names()).toEqual([]);
  });

  it('composes the snapshot from every part, by name, without the panels that have none', () => {
    const ps = createPanels();
    ps.add(panel('mechanisms', { open: 'stepper' }));
    ps.add(panel('chrome'));
    ps.add(panel('overview', { cells: [1, 2] }));
    ps.add(panel('zero', 0));
    expect(ps.snapshot()).toEqual({ mechanisms: { open: 'stepper' }, overview: { cells: [1, 2] }, zero: 0 });
    expect(ps.get('overview').snapshot()).toEqual({ cells: [1, 2] });
    expect(ps.get('none')).toBeNull();
  });

  it('routes the background worker\'s answers to the panel that takes their kind, one panel per kind', () => {
    const ps = createPanels();
    const got = [];
    ps.add({ ...panel('sweep'), routes: { 'sweep-point': (m) => got.push(['sweep', m.i]) } });
    ps.add(panel('chrome'));
    ps.add({ ...panel('overview'), routes: { 'overview-cell': (m) => got.push(['overview', m.i]) } });
    const routes = ps.routes();
    expect(Object.keys(routes).sort()).toEqual(['overview-cell', 'sweep-point']);
    routes['sweep-point']({ i: 1 }); routes['overview-cell']({ i: 2 });
    expect(got).toEqual([['sweep', 1], ['overview', 2]]);
    ps.add({ ...panel('thief'), routes: { 'sweep-point': () => {} } });
    expect(() => ps.routes()).toThrow('the panel "thief" routes sweep-point, which another panel takes');
  });

  it('is how main.mjs and embed.mjs mount their panels: every mount call goes through panels.add', () => {
    for (const f of ['web/main.mjs', 'web/embed.mjs']) {
      const src = readFileSync(f, 'utf8');
      const mounts = [...src.matchAll(/\b(mount[A-Z]\w*)\(/g)].map((m) => m[1]).filter((m) => m !== 'mountExplain'); // the popover is no panel: it has no state
      expect(mounts.length, f).toBeGreaterThan(0);
      for (const m of new Set(mounts)) {
        // the element mounts inside its own language (embed.mjs speak): panels.add(this.speak(() => mountX(…)))
        const calls = src.split(`${m}(`).length - 1, added = src.match(new RegExp(`\\.add\\((?:this\\.speak\\(\\(\\) => )?${m}\\(`, 'g'))?.length ?? 0;
        expect(`${m}: ${added} of ${calls} through panels.add`, f).toBe(`${m}: ${calls} of ${calls} through panels.add`);
      }
    }
  });
});
