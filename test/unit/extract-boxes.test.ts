import { htmlToMarkdown } from '../../activities/site/compendium';

// Boxes inside or beside an article, told apart by what their class says and by what they hold.
const PROSE = [
  'The council voted on Tuesday to close the old swimming baths, after a survey found the roof beyond repair and the pool losing water.',
  'Residents who had campaigned for a decade to keep the baths open said they would ask the courts to review the decision, and a petition has begun.',
  'The leader of the council said the money would go to a new leisure centre by the river, with two pools, a gym and a café, to open in three years.',
  'Swimming clubs that train at the baths will move to the school pool on Park Road until then, and lessons for children will continue as before.',
];
const paragraphs = (from = 0, to = PROSE.length) =>
  PROSE.slice(from, to)
    .map((p) => `<p>${p}</p>`)
    .join('');
const fit = (body: string, title = 'Council closes the baths') =>
  htmlToMarkdown(
    `<html><head><title>${title}</title></head><body>${body}</body></html>`,
    'fit',
    'https://news.test/baths',
  );
const expectProse = (md: string) => {
  for (const p of PROSE) expect(md).toContain(p);
};

describe('fit: boxes in and around the article', () => {
  test('an item whose class says it has no caption (`no_caption`) is no caption: its heading stays', () => {
    const md = fit(
      `<article><div class="superlist_item superlist_item_image no_caption"><h2>The roof of the old baths has been leaking since the winter storms of last year.</h2><img src="/roof.jpg"></div>${paragraphs()}</article>`,
    );
    expect(md).toContain('The roof of the old baths has been leaking');
    expectProse(md);
  });

  test('a "most popular" box after the article goes, whatever its length', () => {
    const stories = Array.from(
      { length: 6 },
      (_, i) =>
        `<li><h3><a href="/story-${i}">Another story of the day, number ${i}</a></h3><p>A summary of that other story, long enough to read as a sentence of its own.</p></li>`,
    ).join('');
    const md = fit(
      `<main><article>${paragraphs()}</article><section class="c-article-most-popular"><h2>Most Popular</h2><ol>${stories}</ol></section></main>`,
    );
    expectProse(md);
    expect(md).not.toContain('Most Popular');
    expect(md).not.toContain('Another story of the day');
  });

  test('a box of teasers for other stories inside the article goes, a teaser paragraph of its own lede stays', () => {
    // greenpeace.de (trafilatura's pages): "Zum Weiterlesen" and "Mehr zu Klima und Konsum" were kept.
    const cards = Array.from(
      { length: 3 },
      (_, i) =>
        `<div class="Teaser"><h3><a href="/story-${i}">Another campaign of ours, number ${i}</a></h3><p>What that other story is about, told in two sentences that read like the article's own. It ran last month, and readers who liked this one may like it too.</p></div>`,
    ).join('');
    const md = fit(
      `<main><article><p class="teaser">The council will decide on the baths next week.</p>${paragraphs()}<div class="Teasers u-container Teasers--3"><h2 class="Teasers-headline">Read on</h2>${cards}</div></article></main>`,
    );
    expectProse(md);
    expect(md).toContain('The council will decide on the baths next week.');
    expect(md).not.toContain('Another campaign of ours');
    expect(md).not.toContain('Read on');
  });

  test("the author's box and the copyright notice under the article go", () => {
    // angelmagazin.de (trafilatura's pages): "Über den Autor" and its bio were kept; Börsen-Zeitung's
    // and Euronews's copyright lines too (fundus's pages).
    const md = fit(
      `<article>${paragraphs()}<div class="post-author"><div class="row"><p><strong>About the author</strong></p><p>Sam Writer has fished the rivers of the north for thirty years and writes about tackle, knots and patience. If you like these pieces, buy Sam a coffee.</p></div></div><div class="copyright">© 2024 The Baths Gazette. All rights reserved.</div></article>`,
    );
    expectProse(md);
    expect(md).not.toContain('About the author');
    expect(md).not.toContain('buy Sam a coffee');
    expect(md).not.toContain('All rights reserved');
  });

  test("a post given to readers without scripts in a <noscript> is the page's text; a notice to turn scripts on is not", () => {
    // security.googleblog.com (trafilatura's pages): Blogger writes the post into a script template
    // and into a <noscript>; fit read neither and kept the blog's header and footer.
    const md = fit(
      `<div class="header"><h2><a href="/">Security Blog</a></h2><div class="header-desc">The latest news from the team</div></div>` +
        `<div class="post"><h2 class="title"><a href="/post">Council closes the baths</a></h2><div class="post-body"><script type="text/template"><p>${PROSE[0]}</p></script><noscript>${paragraphs()}</noscript></div></div>` +
        '<noscript><p>Please turn on JavaScript to see this site.</p></noscript><div class="footer"><a href="/privacy">Privacy</a> <a href="/terms">Terms</a></div>',
    );
    expectProse(md);
    expect(md).not.toContain('turn on JavaScript');
    expect(md).not.toContain('The latest news from the team');
  });

  test("a chart's labels (an ai2html graphic) are not the article's text", () => {
    const labels = ['$915 billion', 'Interest payments', '$900', '600', '300', '2018', '2028']
      .map((l) => `<p class="g-pstyle0">${l}</p>`)
      .join('');
    const md = fit(
      `<article>${paragraphs(0, 2)}<div class="ai2html ai2html-box-v5"><div class="g-artboard">${labels}</div></div>${paragraphs(2)}</article>`,
    );
    expectProse(md);
    expect(md).not.toContain('$915 billion');
  });

  test("an advertisement's label left without its advertisement goes", () => {
    const md = fit(
      `<article>${paragraphs(0, 2)}<div class="slot"><p>Advertisement</p></div>${paragraphs(2)}<div>Anzeige</div></article>`,
    );
    expectProse(md);
    expect(md).not.toMatch(/Advertisement|Anzeige/);
  });

  test("a byline box goes; a dateline inside the lede's paragraph stays", () => {
    const md = fit(
      `<article><div class="article-author"><a href="/by/joe">Joe Wee</a> Monday, February 29, 2016 11:10 PM UTC</div><p><span class="dateline">KOBE – </span>${PROSE[0]}</p>${paragraphs(1)}</article>`,
    );
    expect(md).not.toContain('Joe Wee');
    expect(md).toContain(`KOBE – ${PROSE[0]}`);
    expectProse(md);
  });

  test("the article's body split over like boxes does not take in a related story's box of the same class", () => {
    // NYT's shape: the body in two wrappers of one class, a related-coverage aside in the first.
    const related = `<div class="supplemental"><aside class="marginalia" role="complementary"><h2>Related Coverage</h2><ul><li><article class="story"><div class="story-body"><h2 class="headline">A related story told in a headline long enough to read as prose</h2></div></article></li></ul></aside></div>`;
    const links = `<div class="interrupter"><a href="#story-continues-1">Continue reading the main story</a> <a href="/section/business">More in Business and the economy</a> <a href="/section/media">More in Media and advertising</a></div>`;
    const md = fit(
      `<article id="story"><div class="story-body-supplemental"><div class="story-body story-body-1">${paragraphs(0, 1)}</div>${related}</div>${links}<div class="story-body-supplemental"><div class="story-body story-body-2">${paragraphs(1)}${paragraphs(1)}</div>${links}</div></article>`,
    );
    expectProse(md);
    expect(md).not.toContain('A related story');
  });

  test("a page builder's article split over like section boxes is read from each of them, without the menus", () => {
    // fluessiggas.de's shape (trafilatura's evaluation set): a lede box, then each part in
    // `div.headline-with-text > div.container > div.row > div.col-md-8`, a table box between them.
    const part = (text: string) =>
      `<div class="container-fluid headline-with-text"><div class="container topic"><div class="row"><div class="col-md-8 offset-md-1">${text}</div><div class="col-md-3"></div></div></div></div>`;
    const links = (label: string) =>
      `<div class="container-fluid strip"><div class="row"><ul>${Array.from({ length: 12 }, (_, i) => `<li><a href="/${label}/${i}">${label} link number ${i}</a></li>`).join('')}</ul></div></div>`;
    const lede = `<section class="blog-post head-post"><div class="container"><div class="row post-top-content"><div class="col-md-9"><div class="post-date">24. Oktober 2022</div><div class="post-text h3"><p>A lede paragraph that says what the article is about, in a sentence or two.</p></div></div></div></div></section>`;
    const table = `<div class="container-fluid near-table"><div class="container table-container"><div class="row"><div class="col-md-10"><table><tr><td>Dichte</td><td>0,67 kg/l</td></tr></table></div></div></div></div>`;
    const later = [
      'The second part of the article explains how the new fuel is made from waste and what it costs, in a paragraph long enough to read.',
      'The third part of the article says when the first filling stations will sell it, and which boilers can burn it without a change.',
    ];
    const md = fit(
      links('Menu') +
        lede +
        part(paragraphs(1, 3)) +
        table +
        part(`${paragraphs(3)}<p>${later[0]}</p><p>${later[1]}</p>`) +
        links('Footer'),
    );
    for (const p of [...PROSE.slice(1), ...later]) expect(md).toContain(p);
    expect(md).not.toMatch(/Menu link|Footer link/);
  });

  test("a homepage's heading and lead in a box of their own stay beside a longer box of testimonials", () => {
    // anwaltniemeyer.de (trafilatura's pages): the lawyer's introduction under "Willkommen!" was
    // left out and only the testimonial slider kept, its quotes outweighing the lead.
    const said = [
      'Many thanks!',
      'Wow, I am thrilled!',
      'Many thanks for your very thorough advice and your quick action.',
      'Should we need advice again, we will gladly come back to you.',
      'Thank you already for the friendly and swift support.',
      'Great, I am pleased!',
      'I will gladly recommend you and come back to you with my own problems too, if need be.',
    ];
    const quotes = Array.from(
      { length: 30 },
      (_, i) =>
        `<li class="testimonial-slide"><div class="testimonial-inner"><blockquote><p>"${said[i % said.length]}"</p><small>E-mail from a client, July 2015</small></blockquote></div></li>`,
    ).join('');
    const contact = '<p><a href="mailto:office@law.test">office@law.test</a></p><p><a href="/imprint">Imprint</a></p>';
    const md = fit(
      `<div class="container"><section id="top"><div class="visible-xs">${contact}</div><div class="row"><div class="col-md-12">${contact}</div></div></section>` +
        '<div class="row"><div class="col-md-12"><div class="jumbotron"><div class="row"><div class="col-md-9"><h1>Welcome!</h1><p class="lead">I am Jane Doe, a lawyer specialised in IT law. I advise start-ups and small and medium-sized companies on contracts, disputes and data protection. I look forward to meeting you!</p></div><div class="col-md-3"><img src="/me.jpg"></div></div></div></div></div>' +
        `<div class="testimonial-slider"><h3>What clients say</h3><ul class="slides">${quotes}</ul></div></div>`,
      'Jane Doe, lawyer',
    );
    expect(md).toContain('I am Jane Doe, a lawyer specialised in IT law.');
    expect(md).toContain('Many thanks for your very thorough advice and your quick action.');
    expect(md).not.toContain('Imprint');
  });

  test("a homepage's <main> is its text, not the slideshow above it that outweighs it", () => {
    // sass-ag.de (trafilatura's pages): the hero slideshow's longest slide was kept and the page's
    // <main>, its own introduction of the company, left out.
    const pitch =
      'Our sets are matched to each other and hold everything you need to design shipping labels yourself, print them at once, and send your parcels the same day, with the software, the printer, the labels and the ribbons in one box.';
    const slides = [
      'Print wherever you like',
      'Printers and shipping labels',
      'Thermal transfer ribbons',
      'Labels in your format',
    ]
      .map(
        (title, i) =>
          `<div class="slide"><div class="textbox"><p class="textbox-title">${title}</p><p>${i === 0 ? `${pitch}</p><p>${pitch}</p><p>${pitch}` : pitch.slice(0, 60)}.</p><p><a href="/sets/${i}">See more</a></p></div></div>`,
      )
      .join('');
    const menu = ['Products', 'Printers', 'Labels', 'Ribbons', 'Service', 'Downloads', 'Contact', 'About us']
      .map((item) => `<li><a href="/${item}">${item}</a></li>`)
      .join('');
    const md = fit(
      `<header><ul class="menu">${menu}</ul></header><div class="slideshow"><div class="slideshow-stage">${slides}</div></div>` +
        '<main><div class="wrapper"><h2>Your partner for labels and printers</h2><p>We advise independently of any manufacturer and always plan objectively, so that you get the printing system that suits your work, your volumes and your budget.</p><p>Buy inexpensive labels in your own format from us, in small runs or large, printed or blank, on paper, film or textile.</p><p>We offer professional printing systems for every use, from the small desktop printer to the industrial one, with service, spare parts and training.</p></div></main>' +
        '<footer><p>Head office: 1 Main Street</p></footer>',
      'Labels and printers',
    );
    expect(md).toContain('We advise independently of any manufacturer');
    expect(md).toContain('from the small desktop printer to the industrial one');
    expect(md).not.toContain('Our sets are matched');
  });

  test('a short article under its heading is the text, not the whole page around it with its menus', () => {
    // dw.com (trafilatura's pages): an audio page's two-sentence intro scored as the article but,
    // short of a page's worth, gave way to the whole body: forty menu links and the footer's lists.
    const links = (prefix: string, n: number) =>
      `<ul class="sitemap">${Array.from({ length: n }, (_, i) => `<li><a href="/${prefix}/${i}" title="${prefix} ${i}">${prefix} section ${i}</a></li>`).join('')}</ul>`;
    const md = fit(
      `<div id="navContainer"><div class="flyout">${links('news', 20)}</div><div class="flyout">${links('learn', 20)}</div></div>` +
        '<div id="innerFrame"><div id="bodyContent"><div class="col3"><h4 class="artikel">Environment</h4><h1>Fertile land lost every year</h1>' +
        '<p class="intro">Twenty-four billion tonnes of fertile soil are lost every year as biodiversity declines. That is what a study by the research institute in Dakar found, published this week.</p>' +
        '<div class="group"><div class="longText"><p>Author: A. Writer</p></div></div></div></div></div>' +
        `<div id="footerBody">${links('footer', 15)}</div>`,
      'Fertile land lost every year',
    );
    expect(md).toContain('Twenty-four billion tonnes of fertile soil are lost every year');
    expect(md).not.toContain('news section 3');
    expect(md).not.toContain('footer section 3');
  });

  // An Elementor page: each section a heading widget beside a text widget, many boxes deep.
  const said = [
    'The network began as a forum for journalism and analysis and has grown into a platform that turns what researchers know into proposals for policy, with a blog, a salon and a journal.',
    'Its hub for young strategists builds on the idea that carried Europe after the wars: cooperation, not conflict, and the house that idea built, which is not finished yet.',
    'In 2018 the hub met in Vienna for three days, with forty participants from twelve countries, and wrote a paper that was presented to the foreign ministry in the spring.',
    'A book followed in 2019, edited by the hub and written by its members, on how a younger generation sees the strategic questions of the continent.',
  ];
  let elementorId = 0;
  const widget = (kind: string, inner: string) =>
    `<div class="elementor-element elementor-element-w${elementorId++} elementor-widget elementor-widget-${kind}"><div class="elementor-widget-container">${inner}</div></div>`;
  const section = (title: string, texts: string[]) =>
    `<section class="elementor-section elementor-top-section elementor-element elementor-element-s${elementorId++}"><div class="elementor-container"><div class="elementor-row"><div class="elementor-column elementor-element elementor-element-c${elementorId++}"><div class="elementor-column-wrap"><div class="elementor-widget-wrap">` +
    widget('heading', `<h2 class="elementor-heading-title">${title}</h2>`) +
    widget('text-editor', `<div class="elementor-text-editor">${texts.map((t) => `<p>${t}</p>`).join('')}</div>`) +
    '</div></div></div></div></div></section>';
  const whoWeAre = () =>
    section('Who we are', [said[0]!, said[1]!, said[0]!.replace('The network', 'It'), said[1]!.replace('Its', 'The')]);

  test("a page builder's sections, each a heading widget beside a text widget, are read as one text", () => {
    // shabka.org's about page (trafilatura's pages, Elementor): the climb from the best text widget
    // stopped at the first box that added only a heading, so one section of four was kept.
    const md = fit(
      '<header><nav><a href="/">Home</a> <a href="/about">About</a></nav></header><main><article class="page type-page"><h1>About us</h1><div class="entry-content"><div class="elementor"><div class="elementor-section-wrap">' +
        whoWeAre() +
        section('The hub in 2018', [
          said[2]!,
          said[3]!,
          said[2]!.replace('In 2018', 'In 2019'),
          said[3]!.replace('A book', 'A second book'),
        ]) +
        '</div></div></div></article></main><footer><p>© The network 2019</p></footer>',
      'About us',
    );
    expect(md).toContain('The network began as a forum for journalism');
    expect(md).toContain('In 2018 the hub met in Vienna');
    expect(md).toContain('A second book followed in 2019');
    expect(md).not.toContain('© The network');
  });

  test("a short section of an Elementor page stays: its `elementor-widget-*` boxes are its layout, not a sidebar's widgets", () => {
    // novalanalove.com (trafilatura's pages): its product notes were dropped as "widgets".
    const md = fit(
      '<main><article><h1>About us</h1><div class="elementor"><div class="elementor-section-wrap">' +
        whoWeAre() +
        section('The hub in 2018', [said[2]!]) +
        '</div></div></article></main>',
      'About us',
    );
    expect(md).toContain('The network began as a forum for journalism');
    expect(md).toContain('In 2018 the hub met in Vienna');
  });

  test("a box Bootstrap hides on phones only (`hidden-xs`) is the page's text on the page as read", () => {
    // parallels.com (trafilatura's pages): its feature list in a `hidden-xs` column was dropped as hidden.
    const md = fit(
      `<main><article>${paragraphs()}<div class="row"><div class="col-sm-6 hidden-xs"><p>Residents can swim at the school pool on weekday evenings.</p></div></div></article></main>`,
    );
    expectProse(md);
    expect(md).toContain('Residents can swim at the school pool on weekday evenings.');
  });

  test("a rating widget's prompts are not the page's text, however many there are", () => {
    // chefkoch.de's recipe page (trafilatura's evaluation set): each photo and the recipe have a
    // rating dialog of short sentences, which outscored the recipe's ingredients and method.
    const rating = `<div class="accordion-content accordion-content-recipe_rating"><p>Wie hat dir dieses Rezept gefallen, bewerte es jetzt?</p><p>Vielen Dank für deine Bewertung, sie hilft allen anderen.</p><p>Du hast das Rezept bereits bewertet, danke dafür.</p><p>Melde dich an und bewerte das Rezept mit Sternen.</p></div>`;
    const method =
      'Mehl, Zucker, Butter und das Ei zu einem glatten Mürbeteig verkneten, in die gefettete Springform drücken und einen Rand hochziehen. Die Mandarinen abtropfen lassen, auf dem Boden verteilen, mit der Schmandcreme bedecken und bei 175 Grad etwa 70 Minuten backen.';
    const tip =
      'Wer es fruchtiger mag, nimmt statt der Mandarinen Pfirsiche aus der Dose oder frische Aprikosen; der Kuchen wird dann etwas saftiger und braucht zehn Minuten länger im Ofen, bis die Creme in der Mitte fest ist.';
    const serve =
      'Den Kuchen in der Form vollständig auskühlen lassen, am besten über Nacht im Kühlschrank, dann lässt er sich sauber schneiden. Mit Schlagsahne servieren; er hält sich gekühlt zwei bis drei Tage.';
    const md = fit(
      `${rating}<article class="ds-box"><h2>Zutaten</h2><table class="ingredients"><tr><td>125 g</td><td>Mehl</td></tr><tr><td>65 g</td><td>Zucker</td></tr></table><h2>Zubereitung</h2><p>${method}</p><p>${tip}</p><p>${serve}</p></article>${rating}${rating}`,
      'Mandarinen-Schmand-Kuchen',
    );
    for (const p of [method, tip, serve]) expect(md).toContain(p);
    expect(md).not.toMatch(/bewerte/);
  });

  test("a shop's customer reviews widget is not the product's text, as a comment thread is not the article's", () => {
    // happycoffee.org's product page (trafilatura's evaluation set): the description beside a
    // Judge.me review widget of forty reviews, which outscored it.
    const review = (i: number) =>
      `<div class="jdgm-rev jdgm-divider-top"><div class="jdgm-rev__content"><b class="jdgm-rev__title">Absolut überzeugend, Nummer ${i}</b><div class="jdgm-rev__body"><p>Ich kann die Meinung der anderen nur bestätigen, der Kaffee schmeckt fruchtig, mild und frisch, jede Woche wieder.</p></div></div></div>`;
    const description = [
      'Unser Sidamo wächst in den Bergen Äthiopiens auf 1.900 Metern Höhe, wird von Hand gepflückt, gewaschen und in der Sonne getrocknet.',
      'In der Tasse zeigt er rote Beeren, Zitrusnoten und eine feine Süße; wir rösten ihn schonend im Trommelröster, damit die Säure mild bleibt.',
      'Alle Kaffees sind bio-zertifiziert und werden frisch geröstet verschickt, ganze Bohnen oder gemahlen für Filter, French Press und Espresso.',
    ];
    const md = fit(
      `<div class="product"><div class="description">${description.map((p) => `<p>${p}</p>`).join('')}</div><div class="jdgm-widget jdgm-review-widget" id="judgeme_product_reviews"><div class="jdgm-rev-widg"><h2>Customer Reviews</h2>${Array.from({ length: 8 }, (_, i) => review(i)).join('')}</div></div></div>`,
      'Sidamo Bio Kaffeebohnen',
    );
    for (const p of description) expect(md).toContain(p);
    expect(md).not.toMatch(/Absolut überzeugend|Meinung der anderen/);
  });
});
