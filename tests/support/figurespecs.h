// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Figure specs the figure tests start from: a print size in millimetres at a resolution, or a size in pixels; and
// what a render's legend said.
#include "figure/figurerenderer.h"
#include "figure/figurespec.h"

#include <QStringList>

namespace exposure::testing {

inline FigureSpec millimetreSpec(
    double widthMm, double heightMm, int dpi, FigureSpec::Format format = FigureSpec::Format::Png)
{
    FigureSpec s;
    s.format = format;
    s.sizeUnit = FigureSpec::SizeUnit::Millimetres;
    s.widthMm = widthMm;
    s.heightMm = heightMm;
    s.dpi = dpi;
    return s;
}

inline FigureSpec pixelSpec(int widthPx, int heightPx)
{
    FigureSpec s;
    s.sizeUnit = FigureSpec::SizeUnit::Pixels;
    s.widthPx = widthPx;
    s.heightPx = heightPx;
    return s;
}

// The legend's texts of the last render, in the order drawn.
inline QStringList legendTexts(const FigureRenderer& r)
{
    QStringList out;
    for (const PlotText& t : r.check().texts)
        if (t.role == PlotText::Role::Legend)
            out << t.text;
    return out;
}

} // namespace exposure::testing
