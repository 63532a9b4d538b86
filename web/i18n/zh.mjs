// zh.mjs: the page's Simplified Chinese catalogue, one object from its parts (docs/i18n.md):
// page (header, status, controls), lessons (the lessons' words and citations), explain (variants'
// hints and explanations, readouts' explanations, the glossary, notes and notices), charts (figures,
// heatmaps, hover, cost line, export), panels (mechanisms, sweep, overview, model, own inputs), embed.
import { combine } from './combine.mjs';
import page from './zh/page.mjs';
import lessons from './zh/lessons.mjs';
import explain from './zh/explain.mjs';
import charts from './zh/charts.mjs';
import panels from './zh/panels.mjs';
import embed from './zh/embed.mjs';

export default combine({ page, lessons, explain, charts, panels, embed });
