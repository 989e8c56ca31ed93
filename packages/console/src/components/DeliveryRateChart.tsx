/**
 * Delivery rate over 7 Vietnam days as SVG bars: delivered ÷ (delivered + failed) of the messages
 * created that day, the rate above each bar and the counts under it.
 * The picture is role="img" with a summary label; the same numbers are in a visually hidden table.
 */
import type { DeliveryRateDay } from '../api-types.ts';
import { formatDay, formatNumber, formatPercent } from '../format.ts';
import { useI18n } from '../i18n/index.tsx';

const WIDTH = 560;
const HEIGHT = 220;
const TOP = 24;
const BOTTOM = 40;
const LEFT = 40;
const RIGHT = 8;

export function DeliveryRateChart({ days }: { days: DeliveryRateDay[] }) {
  const { t, language } = useI18n();
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const slot = (WIDTH - LEFT - RIGHT) / Math.max(days.length, 1);
  const barWidth = Math.min(48, slot * 0.6);
  const rateText = (day: DeliveryRateDay) => (day.rate === null ? t('overview.noSends') : formatPercent(day.rate, language));
  const summary = days.map((day) => `${formatDay(day.day, language)}: ${rateText(day)}`).join('; ');

  return (
    <figure className="chart">
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-label={`${t('overview.deliveryRate')}. ${summary}`}
        className="chart-svg"
        preserveAspectRatio="xMidYMid meet"
      >
        {[0, 0.5, 1].map((tick) => {
          const y = TOP + plotHeight * (1 - tick);
          return (
            <g key={tick}>
              <line x1={LEFT} x2={WIDTH - RIGHT} y1={y} y2={y} className="chart-grid" />
              <text x={LEFT - 6} y={y + 4} textAnchor="end" className="chart-axis">
                {formatPercent(tick, language)}
              </text>
            </g>
          );
        })}
        {days.map((day, index) => {
          const x = LEFT + slot * index + (slot - barWidth) / 2;
          const height = day.rate === null ? 0 : plotHeight * day.rate;
          const y = TOP + plotHeight - height;
          return (
            <g key={day.day}>
              {day.rate === null ? (
                <line x1={x} x2={x + barWidth} y1={TOP + plotHeight} y2={TOP + plotHeight} className="chart-empty" />
              ) : (
                <rect x={x} y={y} width={barWidth} height={Math.max(height, 1)} className="chart-bar" />
              )}
              <text x={x + barWidth / 2} y={Math.max(y - 6, 12)} textAnchor="middle" className="chart-value">
                {day.rate === null ? '—' : formatPercent(day.rate, language)}
              </text>
              <text x={x + barWidth / 2} y={HEIGHT - BOTTOM + 16} textAnchor="middle" className="chart-axis">
                {formatDay(day.day, language)}
              </text>
              <text x={x + barWidth / 2} y={HEIGHT - BOTTOM + 32} textAnchor="middle" className="chart-axis">
                {`${formatNumber(day.delivered, language)}/${formatNumber(day.delivered + day.failed, language)}`}
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption className="chart-caption">{t('overview.chartCaption')}</figcaption>
      <table className="visually-hidden">
        <caption>{t('overview.deliveryRate')}</caption>
        <thead>
          <tr>
            <th scope="col">{t('overview.day')}</th>
            <th scope="col">{t('overview.sentCount')}</th>
            <th scope="col">{t('status.delivered')}</th>
            <th scope="col">{t('status.failed')}</th>
            <th scope="col">{t('overview.rate')}</th>
          </tr>
        </thead>
        <tbody>
          {days.map((day) => (
            <tr key={day.day}>
              <th scope="row">{day.day}</th>
              <td>{day.sent}</td>
              <td>{day.delivered}</td>
              <td>{day.failed}</td>
              <td>{rateText(day)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
