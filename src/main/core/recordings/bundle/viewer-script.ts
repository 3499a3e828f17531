/**
 * The offline viewer's script (plain DOM code, inlined into index.html): renders the bundle's data
 * (see ViewerData) and keeps the timeline and the video in step. It runs from file:// with no
 * network, so it uses nothing but the page and the files next to it.
 */
export const VIEWER_SCRIPT = String.raw`
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('bundle-data').textContent);
  var task = data.task;
  var SVG = 'http://www.w3.org/2000/svg';

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) {
      var value = attrs[name];
      if (value === null || value === undefined || value === false) return;
      if (name === 'text') node.textContent = value;
      else node.setAttribute(name, value === true ? '' : String(value));
    });
    (children || []).forEach(function (child) {
      if (child) node.append(child);
    });
    return node;
  }

  function svg(tag, attrs) {
    var node = document.createElementNS(SVG, tag);
    Object.keys(attrs).forEach(function (name) {
      node.setAttribute(name, String(attrs[name]));
    });
    return node;
  }

  /** m:ss (h:mm:ss), with tenths when asked: steps are often less than a second apart. */
  function clock(seconds, tenths) {
    var total = Math.max(0, Math.round(seconds * 10) / 10);
    var s = Math.floor(total);
    var h = Math.floor(s / 3600);
    var m = Math.floor((s % 3600) / 60);
    var rest = String(s % 60).padStart(2, '0') + (tenths ? '.' + Math.round((total - s) * 10) : '');
    return h > 0 ? h + ':' + String(m).padStart(2, '0') + ':' + rest : m + ':' + rest;
  }

  function localTime(iso) {
    return new Date(iso).toLocaleString();
  }

  // ---- the task ---------------------------------------------------------------------------------

  var ended = task.exit_code !== null;
  var startedAt = Date.parse(data.entries.length ? data.entries[0].at : task.created_at);
  document.getElementById('title').textContent = data.title;
  var status = document.getElementById('status');
  status.textContent = task.status.replace('_', ' ');
  status.className = 'status status-' + task.status;

  function row(name, value, cls) {
    if (value === null || value === undefined || value === '') return null;
    return el('div', { class: cls || null }, [el('dt', { text: name }), el('dd', { text: value })]);
  }
  document
    .getElementById('summary')
    .append(
      el('h2', { text: 'Instruction' }),
      el('p', { class: 'instruction', text: task.instruction }),
      el('dl', {}, [
        row('Result', task.result, 'ok'),
        row('Error', task.error, 'danger'),
        row('Model', task.model),
        row('Steps', task.steps + ' of at most ' + task.max_steps),
        row('Computer', task.computer_id),
        row('Started', localTime(task.created_at)),
        ended
          ? row('Ended', localTime(task.updated_at))
          : row('Last update', localTime(task.updated_at)),
        ended
          ? row('Took', clock((Date.parse(task.updated_at) - Date.parse(task.created_at)) / 1000))
          : null,
        row('Exit code', task.exit_code === null ? null : String(task.exit_code)),
      ]),
    );

  document.getElementById('files').append(
    'Files: ',
    ...data.files.map(function (file) {
      return el('a', { href: file.name, target: '_blank', title: file.label, text: file.name });
    }),
  );

  // ---- the video --------------------------------------------------------------------------------

  var video = null;
  var player = document.getElementById('player');
  if (data.video) {
    video = el('video', {
      src: data.video,
      controls: true,
      preload: 'metadata',
      'aria-label': 'Screen recording',
    });
    player.append(
      el('h2', { text: 'Screen' }),
      video,
      el('p', {
        class: 'muted',
        text: 'Click a step to see the screen from there; while it plays, the current step is marked.',
      }),
    );
  } else {
    player.append(
      el('h2', { text: 'Screen' }),
      el('p', { class: 'muted', text: 'This bundle has no video of the screen.' }),
    );
  }

  // ---- the timeline -----------------------------------------------------------------------------

  function shotOf(entry) {
    if (entry.shot.missing) {
      return el('div', {
        class: 'shot shot-empty',
        text: 'screenshot not in the bundle: ' + entry.shot.missing,
      });
    }
    var img = el('img', {
      src: entry.shot.file,
      alt: 'Screenshot of step ' + entry.step,
      loading: 'lazy',
      decoding: 'async',
      width: entry.shot.width,
      height: entry.shot.height,
    });
    var link = el(
      'a',
      { class: 'shot', href: entry.shot.file, target: '_blank', title: 'Open the screenshot' },
      [img],
    );
    function drawMarks(width, height) {
      if (!entry.marks.length) return;
      var marks = svg('svg', {
        class: 'shot-marks',
        viewBox: '0 0 ' + width + ' ' + height,
        preserveAspectRatio: 'none',
        'aria-hidden': 'true',
      });
      var unit = width / 100;
      entry.marks.forEach(function (mark) {
        var g = svg('g', {});
        if (mark.end_x !== undefined) {
          g.append(
            svg('line', {
              x1: mark.x,
              y1: mark.y,
              x2: mark.end_x,
              y2: mark.end_y,
              class: 'mark-line',
              'stroke-width': unit * 0.6,
            }),
          );
          g.append(
            svg('circle', {
              cx: mark.end_x,
              cy: mark.end_y,
              r: unit * 2.2,
              class: 'mark-ring',
              'stroke-width': unit * 0.6,
            }),
          );
        }
        g.append(
          svg('circle', {
            cx: mark.x,
            cy: mark.y,
            r: unit * 2.2,
            class: 'mark-ring',
            'stroke-width': unit * 0.6,
          }),
        );
        g.append(svg('circle', { cx: mark.x, cy: mark.y, r: unit * 0.6, class: 'mark-dot' }));
        marks.append(g);
      });
      link.append(marks);
    }
    if (entry.shot.width && entry.shot.height) drawMarks(entry.shot.width, entry.shot.height);
    else
      img.addEventListener(
        'load',
        function () {
          drawMarks(img.naturalWidth, img.naturalHeight);
        },
        { once: true },
      );
    img.addEventListener('error', function () {
      link.replaceWith(
        el('div', { class: 'shot shot-empty', text: 'screenshot could not be loaded' }),
      );
    });
    if (entry.captions.length)
      link.append(el('span', { class: 'shot-caption', text: entry.captions.join(' · ') }));
    return link;
  }

  function lineOf(line) {
    var result = null;
    if (line.result) {
      result = line.result.ok
        ? el('span', {
            class: 'result result-ok',
            text: '✓' + (line.result.text ? ' ' + line.result.text : ''),
          })
        : el('span', {
            class: 'result result-error',
            text: 'failed: ' + (line.result.text || 'error'),
          });
    }
    return el('li', { class: 'event event-' + line.type }, [
      el('span', { class: 'event-kind', text: line.label }),
      el('span', { class: 'event-text', text: line.text }),
      result,
    ]);
  }

  /** When it happened: its place on the video (a button that shows it there), else its time into the task. */
  function when(entry) {
    var title = localTime(entry.at);
    if (video && entry.offset !== null) {
      var at = clock(entry.offset, true);
      return el('button', {
        type: 'button',
        class: 'when seek',
        title: title,
        'aria-label': 'Show the screen at ' + at,
        text: '▶ ' + at,
      });
    }
    return el('time', {
      class: 'when',
      datetime: entry.at,
      title: title,
      text: '+' + clock((Date.parse(entry.at) - startedAt) / 1000, true),
    });
  }

  var RENDER = {
    step: function (entry) {
      var links = [];
      if (entry.model.request)
        links.push(el('a', { href: entry.model.request, target: '_blank', text: 'model request' }));
      if (entry.model.response)
        links.push(el('a', { href: entry.model.response, target: '_blank', text: 'model answer' }));
      return el(
        'li',
        { class: entry.shot ? 'entry entry-step' : 'entry entry-start', 'data-step': entry.step },
        [
          entry.shot ? shotOf(entry) : null,
          el('div', { class: 'step-text' }, [
            el('div', { class: 'entry-head' }, [
              el('h3', { text: entry.step > 0 ? 'Step ' + entry.step : 'Start' }),
              when(entry),
            ]),
            el('ul', { class: 'events' }, entry.lines.map(lineOf)),
            links.length ? el('p', { class: 'model-links' }, links) : null,
          ]),
        ],
      );
    },
    person: function (entry) {
      return el('li', { class: 'entry entry-person' }, [
        el('div', { class: 'entry-head' }, [
          el('span', { class: 'person', text: 'a person: ' + entry.text }),
          when(entry),
        ]),
      ]);
    },
  };

  var timeline = document.getElementById('timeline');
  var items = data.entries.map(function (entry) {
    var render = RENDER[entry.kind];
    var node = render ? render(entry) : el('li', { class: 'entry', text: entry.kind });
    if (video && entry.offset !== null) {
      node.classList.add('seekable');
      node.addEventListener('click', function (event) {
        if (event.target.closest('a')) return;
        seek(entry.offset);
      });
    }
    timeline.append(node);
    return { entry: entry, node: node };
  });
  if (!items.length)
    timeline.append(el('li', { class: 'muted', text: 'The task recorded no step.' }));

  // ---- the video in step with the timeline ----------------------------------------------------------

  var timed = items.filter(function (item) {
    return item.entry.offset !== null;
  });
  var current = null;

  function mark(item, follow) {
    if (item === current) return;
    if (current) current.node.classList.remove('current');
    current = item;
    if (!item) return;
    item.node.classList.add('current');
    if (follow) item.node.scrollIntoView({ block: 'nearest' });
  }

  function seek(offset) {
    video.currentTime = offset;
    mark(itemAt(offset), false);
  }

  function itemAt(time) {
    var found = null;
    for (var i = 0; i < timed.length && timed[i].entry.offset <= time + 0.05; i++) found = timed[i];
    return found;
  }

  if (video) {
    var follow = function () {
      mark(itemAt(video.currentTime), !video.paused);
    };
    video.addEventListener('timeupdate', follow);
    video.addEventListener('seeked', follow);
  }
  performance.mark('timeline-shown');
  document.body.dataset.ready = 'true';
})();
`;
