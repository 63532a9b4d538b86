// en.mjs: the page's English catalogue, one object from its parts (docs/i18n.md):
// page (header, status, controls), lessons (the lessons' words and citations), explain (variants'
// hints and explanations, readouts' explanations, the glossary, notes and notices), charts (figures,
// heatmaps, hover, cost line, export), panels (mechanisms, sweep, overview, model, own inputs), embed.
import { combine } from './combine.mjs';
import page from './en/page.mjs';
import lessons from './en/lessons.mjs';
import explain from './en/explain.mjs';
import charts from './en/charts.mjs';
import panels from './en/panels.mjs';
import embed from './en/embed.mjs';

export default combine({ page, lessons, explain, charts, panels, embed });
