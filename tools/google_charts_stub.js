// Stands in for https://www.gstatic.com/charts/loader.js (Google Charts), which XProf's page loads before its own
// code and which this machine cannot reach. DataTable and DataView are real enough for the page to read its data;
// every chart draws a labelled empty box instead of the Google chart.
(function () {
  class DataTable {
    constructor(json) {
      const data = typeof json === "string" ? JSON.parse(json) : json || {};
      this.cols = (data.cols || []).map((c) => ({...c}));
      this.rows = (data.rows || []).map((r) => ({...r, c: (r.c || []).map((cell) => (cell ? {...cell} : null))}));
      this.p = data.p || {};
    }
    getNumberOfRows() { return this.rows.length; }
    getNumberOfColumns() { return this.cols.length; }
    getValue(r, c) { const cell = this.rows[r].c[c]; return cell ? cell.v : null; }
    getFormattedValue(r, c) { const cell = this.rows[r].c[c]; return cell ? (cell.f ?? String(cell.v ?? "")) : ""; }
    setValue(r, c, v) { this.rows[r].c[c] = {...(this.rows[r].c[c] || {}), v}; }
    setFormattedValue(r, c, f) { this.rows[r].c[c] = {...(this.rows[r].c[c] || {}), f}; }
    setCell(r, c, v, f, p) { this.rows[r].c[c] = {v, f, p}; }
    getColumnLabel(c) { return this.cols[c].label || ""; }
    getColumnId(c) { return this.cols[c].id || ""; }
    getColumnType(c) { return this.cols[c].type; }
    getColumnIndex(id) { return this.cols.findIndex((col) => col.id === id || col.label === id); }
    getColumnProperty(c, name) { return (this.cols[c].p || {})[name] ?? null; }
    getColumnProperties(c) { return this.cols[c].p || {}; }
    getColumnRole(c) { return (this.cols[c].p || {}).role || ""; }
    getTableProperty(name) { return this.p[name] ?? null; }
    getTableProperties() { return this.p; }
    setTableProperty(name, v) { this.p[name] = v; }
    getProperty(r, c, name) { const cell = this.rows[r].c[c]; return cell && cell.p ? cell.p[name] ?? null : null; }
    getRowProperty(r, name) { return (this.rows[r].p || {})[name] ?? null; }
    getRowProperties(r) { return this.rows[r].p || {}; }
    addColumn(type, label, id) {
      const col = typeof type === "object" ? {...type} : {type, label, id};
      this.cols.push(col); this.rows.forEach((r) => r.c.push(null)); return this.cols.length - 1;
    }
    addRow(cells) {
      this.rows.push({c: (cells || []).map((v) => (v !== null && typeof v === "object" && "v" in v ? v : {v}))});
      return this.rows.length - 1;
    }
    addRows(rows) {
      if (typeof rows === "number") { for (let i = 0; i < rows; i++) this.addRow([]); }
      else rows.forEach((r) => this.addRow(r));
      return this.rows.length - 1;
    }
    removeRow(r) { this.rows.splice(r, 1); }
    removeRows(r, n) { this.rows.splice(r, n); }
    removeColumn(c) { this.cols.splice(c, 1); this.rows.forEach((r) => r.c.splice(c, 1)); }
    getSortedRows() { return this.rows.map((_, i) => i); }
    getFilteredRows() { return this.rows.map((_, i) => i); }
    getDistinctValues(c) { return [...new Set(this.rows.map((_, r) => this.getValue(r, c)))]; }
    getColumnRange(c) {
      const values = this.rows.map((_, r) => this.getValue(r, c)).filter((v) => v !== null);
      return {min: Math.min(...values), max: Math.max(...values)};
    }
    sort() {}
    clone() { return new DataTable(this.toJSON()); }
    toJSON() { return JSON.stringify({cols: this.cols, rows: this.rows, p: this.p}); }
  }
  class DataView extends DataTable {
    constructor(table) { super(table && table.toJSON ? table.toJSON() : table); }
    setColumns() {}
    setRows() {}
    hideColumns() {}
    hideRows() {}
    toDataTable() { return new DataTable(this.toJSON()); }
  }
  class Chart {
    constructor(element) { this.element = element; }
    draw() {
      if (!this.element) return;
      this.element.innerHTML = "";
      const box = document.createElement("div");
      box.textContent = "[chart drawn by Google Charts, which is not reachable offline]";
      box.style.cssText = "border:1px dashed #999;color:#777;padding:16px;font:13px sans-serif;text-align:center";
      this.element.appendChild(box);
    }
    clearChart() { if (this.element) this.element.innerHTML = ""; }
    getSelection() { return []; }
    setSelection() {}
    getChartLayoutInterface() { return {getBoundingBox: () => ({left: 0, top: 0, width: 0, height: 0}),
                                        getXLocation: () => 0, getYLocation: () => 0, getChartAreaBoundingBox:
                                        () => ({left: 0, top: 0, width: 0, height: 0})}; }
  }
  const visualization = new Proxy({
    DataTable, DataView,
    arrayToDataTable(rows) {
      const table = new DataTable();
      (rows[0] || []).forEach((label) => table.addColumn(typeof label === "object" ? label : "number", label));
      rows.slice(1).forEach((r) => table.addRow(r));
      return table;
    },
    events: {addListener() { return {}; }, removeListener() {}, removeAllListeners() {}, trigger() {}},
    data: {group: (t) => t, join: (a) => a, sum: () => 0, avg: () => 0, count: () => 0},
  }, {
    get(target, name) {
      if (name in target) return target[name];
      if (typeof name === "string" && /^[A-Z]/.test(name)) return Chart;  // AreaChart, Table, PieChart, ...
      return undefined;
    },
  });
  window.google = window.google || {};
  window.google.visualization = visualization;
  window.google.charts = {
    load() { return Promise.resolve(); },
    safeLoad() { return Promise.resolve(); },
    setOnLoadCallback(callback) { setTimeout(callback, 0); return Promise.resolve(); },
  };
})();
