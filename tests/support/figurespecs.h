// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Figure specs the figure tests start from: a print size in millimetres at a resolution, or a size in pixels.
#include "figure/figurespec.h"

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

} // namespace exposure::testing
