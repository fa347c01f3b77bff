// SPDX-License-Identifier: GPL-3.0-or-later
#include "timeline/palette.h"

#include "analysis/rules.h"
#include "common/labels.h"
#include "common/theme.h"
#include "model/enumnames.h"

#include <array>
#include <cmath>

namespace exposure {

namespace {

// Okabe & Ito (2008) colour-blind-safe set. The default sub-group colours (resources/rules.json) are chosen around it
// so that every two classes differ by a CIELAB ΔE of at least 15 (tst_legibility checks every pair, both palettes).
constexpr QRgb kOrange = 0xE69F00, kGreen = 0x009E73, kBlue = 0x0072B2, kVermillion = 0xD55E00, kPurple = 0xCC79A7;

QColor rgb(QRgb v)
{
    return QColor::fromRgb(v);
}

// Greyscale keeps categories apart by lightness (compute dark, communication mid, memcpy light), and the overlap
// states by a darker exposed state; by the enums' order: Category (compute, communication, memcpy, idle, host) and
// OverlapState (compute only, hidden, exposed, other).
constexpr int kCategoryGrey[] = { 70, 140, 185, 215, 165 };
constexpr int kOverlapGrey[] = { 110, 170, 25, 205, 60, 145 };

QColor greyLevel(int level)
{
    return QColor(level, level, level);
}

constexpr EnumName<PaletteKind> kPaletteNames[] = { { PaletteKind::Default, "default" },
    { PaletteKind::ColorBlind, "colorblind" }, { PaletteKind::ColorBlind, "colourblind" },
    { PaletteKind::Grayscale, "grayscale" }, { PaletteKind::Grayscale, "greyscale" } };

} // namespace

QString paletteKindName(PaletteKind kind)
{
    return QString::fromLatin1(nameIn(kPaletteNames, kind, "default"));
}

PaletteKind paletteKindFromName(const QString& name, bool* ok)
{
    const auto kind = valueIn(kPaletteNames, name.trimmed().toLower().toStdString());
    if (ok)
        *ok = kind.has_value();
    return kind.value_or(PaletteKind::Default);
}

Palette::Palette(PaletteKind kind, const QPalette& base, std::shared_ptr<const Rules> rules)
    : m_kind(kind)
    , m_rules(std::move(rules))
{
    if (!m_rules) {
        static const auto defaults = std::make_shared<const Rules>(Rules::defaults());
        m_rules = defaults;
    }
    m_background = base.color(QPalette::Base);
    m_text = base.color(QPalette::WindowText);
    const bool dark = m_background.lightness() < 128;
    // Light enough never to read as idle grey (#DDDDDD) in a figure: a band of shade is not idle time.
    m_rowShade = dark ? m_background.lighter(125) : m_background.darker(102);
    m_grid = dark ? m_background.lighter(170) : m_background.darker(118);
    m_selection = base.color(QPalette::Highlight);
    m_hover = m_text;
    m_outline = dark ? QColor(Qt::white) : QColor(0x20, 0x20, 0x20);
    if (kind == PaletteKind::Grayscale)
        m_selection = grey(m_selection).darker(150);
}

QColor Palette::grey(QColor c) const
{
    const int g = qGray(c.rgb());
    return QColor(g, g, g);
}

QColor Palette::block(Category category, const std::string& sg) const
{
    // Sub-group colours come with the rules file ("colours"); strict colour-blind mode keeps one per category.
    auto ruled = [&](QRgb categoryColour) {
        return m_kind == PaletteKind::ColorBlind ? rgb(categoryColour)
                                                 : rgb(m_rules->colour(category, sg).value_or(categoryColour));
    };
    QColor c;
    switch (category) {
    case Category::Compute:
        c = ruled(kBlue);
        break;
    case Category::Communication:
        c = ruled(kOrange);
        break;
    case Category::Memcpy:
        c = ruled(kPurple);
        break;
    case Category::Idle:
        c = idle();
        break;
    case Category::Host:
        c = rgb(0xB3A58F);
        break;
    }
    if (m_kind == PaletteKind::Grayscale)
        return greyLevel(kCategoryGrey[std::size_t(category)]);
    return c;
}

QColor Palette::overlap(OverlapState state) const
{
    if (m_kind == PaletteKind::Grayscale)
        return greyLevel(kOverlapGrey[std::size_t(state)]);
    switch (state) {
    case OverlapState::ComputeOnly:
        return rgb(0x9CC8E8);
    case OverlapState::Hidden:
        return rgb(kGreen);
    case OverlapState::Exposed:
        return rgb(kVermillion);
    case OverlapState::Other:
        return rgb(0x8C8C8C);
    case OverlapState::WaitingExposed:
        return rgb(0xE7298A); // magenta: exposed, but the late peer decides it
    case OverlapState::WaitingHidden:
        return rgb(0xA6DBA0); // a light green: hidden, spent waiting
    }
    return rgb(0x8C8C8C);
}

QColor Palette::idle() const
{
    const bool dark = m_background.lightness() < 128;
    if (m_kind == PaletteKind::Grayscale)
        return QColor(225, 225, 225);
    return dark ? m_background.lighter(160) : QColor(0xDDDDDD);
}

QColor Palette::waitingHatch() const
{
    if (m_kind == PaletteKind::Grayscale)
        return QColor(40, 40, 40);
    // Dark brown lines: far from every communication fill and from exposed vermillion.
    return rgb(0x7A4A00);
}

std::vector<Palette::ClassColour> Palette::classColours() const
{
    std::vector<ClassColour> out;
    auto add = [&](const QString& name, const QColor& c) { out.push_back({ name, c }); };
    if (m_kind == PaletteKind::Default) {
        for (const Category c : { Category::Compute, Category::Communication, Category::Memcpy })
            for (const std::string& sg : m_rules->colouredSubgroups(c))
                add(sg == "*" ? QStringLiteral("other %1").arg(QLatin1String(categoryName(c)))
                              : QString::fromStdString(sg),
                    block(c, sg));
    } else {
        add(QStringLiteral("compute"), block(Category::Compute, std::string()));
        add(QStringLiteral("communication"), block(Category::Communication, std::string()));
        add(QStringLiteral("memcpy"), block(Category::Memcpy, std::string()));
    }
    add(QStringLiteral("idle"), idle());
    add(QStringLiteral("host"), block(Category::Host, std::string()));
    for (const OverlapState st : { OverlapState::ComputeOnly, OverlapState::Hidden, OverlapState::Exposed,
             OverlapState::Other, OverlapState::WaitingExposed, OverlapState::WaitingHidden })
        add(overlapStateShortLabel(st), overlap(st));
    add(QStringLiteral("waiting hatch"), waitingHatch());
    return out;
}

namespace {

// sRGB (D65) to CIELAB.
std::array<double, 3> toLab(const QColor& c)
{
    auto lin = [](double v) { return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
    const double r = lin(c.redF()), g = lin(c.greenF()), b = lin(c.blueF());
    const double x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
    const double y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    const double z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
    auto f = [](double t) { return t > 216.0 / 24389.0 ? std::cbrt(t) : (24389.0 / 27.0 * t + 16.0) / 116.0; };
    const double fx = f(x), fy = f(y), fz = f(z);
    return { 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz) };
}

} // namespace

double deltaE76(const QColor& a, const QColor& b)
{
    const auto la = toLab(a), lb = toLab(b);
    return std::sqrt(
        (la[0] - lb[0]) * (la[0] - lb[0]) + (la[1] - lb[1]) * (la[1] - lb[1]) + (la[2] - lb[2]) * (la[2] - lb[2]));
}

QBrush Palette::hiddenBrush() const
{
    if (m_kind == PaletteKind::Grayscale)
        return QBrush(QColor(90, 90, 90), Qt::BDiagPattern);
    return QBrush(overlap(OverlapState::Hidden));
}

QBrush Palette::overlapPattern(OverlapState state) const
{
    if (m_kind != PaletteKind::Grayscale)
        return Qt::NoBrush;
    switch (state) {
    case OverlapState::Hidden:
        return hiddenBrush();
    case OverlapState::WaitingExposed:
        return QBrush(QColor(215, 215, 215), Qt::FDiagPattern);
    case OverlapState::WaitingHidden:
        return QBrush(QColor(40, 40, 40), Qt::FDiagPattern);
    default:
        return Qt::NoBrush;
    }
}

QBrush Palette::exposedBrush() const
{
    return QBrush(overlap(OverlapState::Exposed));
}

QColor Palette::textOn(const QColor& fill)
{
    // Whichever of black and white has the higher WCAG contrast on the fill (at least 4.58:1 for any fill).
    return contrastRatio(fill, Qt::black) >= contrastRatio(fill, Qt::white) ? QColor(Qt::black) : QColor(Qt::white);
}

} // namespace exposure
